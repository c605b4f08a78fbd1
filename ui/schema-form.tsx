/**
 * A form made from a JSON Schema (2020-12, the parts tool inputs and elicitations use): objects
 * (nested as fieldsets), strings, numbers and integers, booleans, enums (`enum`, or `oneOf` /
 * `anyOf` of `const`), arrays (of choices as checkboxes, of anything else as a list), defaults,
 * and `required`. The value is kept raw (numbers as typed text); `toValue` turns it into the
 * arguments and lists what breaks the schema, before anything is sent.
 */
import type { JSX } from 'preact'

/** The parts of a JSON Schema the form reads. */
export type Schema = {
  type?: string | string[]
  title?: string
  description?: string
  properties?: Record<string, Schema>
  required?: string[]
  items?: Schema
  enum?: unknown[]
  oneOf?: Schema[]
  anyOf?: Schema[]
  const?: unknown
  default?: unknown
  minimum?: number
  maximum?: number
  minLength?: number
  maxLength?: number
  pattern?: string
  minItems?: number
  maxItems?: number
  format?: string
}

function typeOf(schema: Schema): string | undefined {
  const type = Array.isArray(schema.type) ? schema.type.find(t => t !== 'null') : schema.type
  if (type !== undefined) return type
  if (schema.properties !== undefined) return 'object'
  if (schema.items !== undefined) return 'array'
  return undefined
}

/** The choices of an enum-like schema, or undefined. */
function choicesOf(schema: Schema): { value: unknown; label: string }[] | undefined {
  if (Array.isArray(schema.enum)) return schema.enum.map(value => ({ value, label: String(value) }))
  const options = schema.oneOf ?? schema.anyOf
  if (Array.isArray(options) && options.length > 0 && options.every(option => 'const' in option)) {
    return options.map(option => ({ value: option.const, label: option.title ?? String(option.const) }))
  }
  return undefined
}

/** The form's first value: every default, numbers as text. */
export function initialValue(schema: Schema): unknown {
  const type = typeOf(schema)
  if (type === 'object' && schema.properties !== undefined) {
    return Object.fromEntries(Object.entries(schema.properties).map(([key, property]) => [key, initialValue(property)]))
  }
  if (type === 'array') return Array.isArray(schema.default) ? schema.default.map(item => choicesOf(schema.items ?? {}) ? item : rawOf(item)) : []
  if (type === 'boolean') return schema.default === true
  if (choicesOf(schema) !== undefined) return schema.default === undefined ? '' : JSON.stringify(schema.default)
  if (type === undefined || type === 'object') return schema.default === undefined ? '' : JSON.stringify(schema.default, null, 2)
  return schema.default === undefined ? '' : String(schema.default)
}

function rawOf(value: unknown): unknown {
  return typeof value === 'number' ? String(value) : value
}

/**
 * The value the schema describes, made from the raw form value; breaks go to `errors` (by path).
 * `isPresent`: the value is there even when empty (the root, an array item the person added).
 */
export function toValue(schema: Schema, raw: unknown, path = '', errors: string[] = [], isPresent = path === ''): unknown {
  const type = typeOf(schema)
  const name = path === '' ? 'the value' : path
  const choices = choicesOf(schema)
  if (type === 'object' && schema.properties !== undefined) {
    const out: Record<string, unknown> = {}
    const record = (raw ?? {}) as Record<string, unknown>
    // A nested object left wholly empty is absent (its parent says whether that is allowed): its own breaks do not count.
    const own: string[] = []
    for (const [key, property] of Object.entries(schema.properties)) {
      const value = toValue(property, record[key], path === '' ? key : `${path}.${key}`, own)
      if (value !== undefined) out[key] = value
      else if (schema.required?.includes(key)) own.push(`${path === '' ? key : `${path}.${key}`} is required`)
    }
    if (!isPresent && Object.keys(out).length === 0) return undefined
    errors.push(...own)
    return out
  }
  if (type === 'array') {
    const items = (raw as unknown[] | undefined) ?? []
    const itemChoices = choicesOf(schema.items ?? {})
    const values = itemChoices !== undefined ? items : items.map((item, index) => toValue(schema.items ?? {}, item, `${path}.${index}`, errors, true)).filter(item => item !== undefined)
    if (values.length === 0 && schema.minItems === undefined) return undefined
    if (schema.minItems !== undefined && values.length < schema.minItems) errors.push(`${name} needs at least ${schema.minItems} items`)
    if (schema.maxItems !== undefined && values.length > schema.maxItems) errors.push(`${name} takes at most ${schema.maxItems} items`)
    return values
  }
  if (type === 'boolean') return raw === true
  if (raw === '' || raw === undefined) return undefined
  if (choices !== undefined) {
    const value = JSON.parse(String(raw))
    if (!choices.some(choice => choice.value === value)) errors.push(`${name} must be one of ${choices.map(choice => choice.label).join(', ')}`)
    return value
  }
  if (type === 'number' || type === 'integer') {
    const value = Number(raw)
    if (String(raw).trim() === '' || !Number.isFinite(value)) { errors.push(`${name} must be a number`); return undefined }
    if (type === 'integer' && !Number.isInteger(value)) errors.push(`${name} must be a whole number`)
    if (schema.minimum !== undefined && value < schema.minimum) errors.push(`${name} must be at least ${schema.minimum}`)
    if (schema.maximum !== undefined && value > schema.maximum) errors.push(`${name} must be at most ${schema.maximum}`)
    return value
  }
  if (type === 'string') {
    const value = String(raw)
    if (schema.minLength !== undefined && value.length < schema.minLength) errors.push(`${name} needs at least ${schema.minLength} characters`)
    if (schema.maxLength !== undefined && value.length > schema.maxLength) errors.push(`${name} takes at most ${schema.maxLength} characters`)
    if (schema.pattern !== undefined && !new RegExp(schema.pattern, 'u').test(value)) errors.push(`${name} must match ${schema.pattern}`)
    return value
  }
  // Any other schema: JSON typed in.
  try { return JSON.parse(String(raw)) } catch { errors.push(`${name} is not JSON`); return undefined }
}

/** The form's fields for `schema` (an object schema at the top), editing `value` through `onChange`. */
export function SchemaForm(props: { schema: Schema; value: unknown; onChange: (update: (old: unknown) => unknown) => void; prefix?: string }) {
  const schema = props.schema.properties === undefined ? { type: 'object', properties: {} } : props.schema
  return <Field schema={schema} value={props.value} onChange={props.onChange} path={props.prefix ?? ''} label="" isRequired={false} isRoot />
}

/** A field; `onChange` takes an update of the old value (several inputs may change in one turn). */
function Field(props: { schema: Schema; value: unknown; onChange: (update: (old: unknown) => unknown) => void; path: string; label: string; isRequired: boolean; isRoot?: boolean }): JSX.Element {
  const { schema, value, onChange, path } = props
  const type = typeOf(schema)
  const choices = choicesOf(schema)
  const title = `${schema.title ?? props.label}${props.isRequired ? ' *' : ''}`
  const help = schema.description !== undefined ? <small>{schema.description}</small> : null
  if (type === 'object' && schema.properties !== undefined) {
    const record = (value ?? {}) as Record<string, unknown>
    const fields = Object.entries(schema.properties).map(([key, property]) => (
      <Field key={key} schema={property} value={record[key]} path={path === '' ? key : `${path}.${key}`} label={key}
        isRequired={schema.required?.includes(key) ?? false} onChange={update => onChange(old => ({ ...(old as Record<string, unknown> ?? {}), [key]: update((old as Record<string, unknown> | undefined)?.[key]) }))} />
    ))
    if (props.isRoot) return <div class="form">{fields.length === 0 ? <p class="muted">No arguments.</p> : fields}</div>
    return <fieldset><legend>{title}</legend>{help}{fields}</fieldset>
  }
  if (type === 'array') {
    const items = (value as unknown[] | undefined) ?? []
    const itemChoices = choicesOf(schema.items ?? {})
    if (itemChoices !== undefined) {
      return (
        <fieldset data-field={path}><legend>{title}</legend>{help}
          {itemChoices.map(choice => (
            <label class="inline" key={String(choice.value)}>
              <input type="checkbox" name={path} value={String(choice.value)} checked={items.includes(choice.value)}
                onChange={event => { const isChecked = (event.currentTarget as HTMLInputElement).checked; onChange(old => { const list = (old as unknown[] | undefined) ?? []; return isChecked ? [...list, choice.value] : list.filter(item => item !== choice.value) }) }} />
              {choice.label}
            </label>
          ))}
        </fieldset>
      )
    }
    return (
      <fieldset data-field={path}><legend>{title}</legend>{help}
        {items.map((item, index) => (
          <div class="row" key={index}>
            <Field schema={schema.items ?? {}} value={item} path={`${path}.${index}`} label={`#${index + 1}`} isRequired={false}
              onChange={update => onChange(old => ((old as unknown[] | undefined) ?? []).map((item, at) => at === index ? update(item) : item))} />
            <button type="button" onClick={() => onChange(old => ((old as unknown[] | undefined) ?? []).filter((_, at) => at !== index))}>Remove</button>
          </div>
        ))}
        <button type="button" data-add={path} onClick={() => onChange(old => [...((old as unknown[] | undefined) ?? []), initialValue(schema.items ?? {})])}>Add</button>
      </fieldset>
    )
  }
  const set = (event: Event) => { const next = (event.currentTarget as HTMLInputElement).value; onChange(() => next) }
  let input: JSX.Element
  if (type === 'boolean') {
    input = <input type="checkbox" name={path} checked={value === true} onChange={event => { const isChecked = (event.currentTarget as HTMLInputElement).checked; onChange(() => isChecked) }} />
  } else if (choices !== undefined) {
    input = (
      <select name={path} value={String(value ?? '')} onChange={set}>
        <option value="">{props.isRequired ? '(choose)' : '(none)'}</option>
        {choices.map(choice => <option key={JSON.stringify(choice.value)} value={JSON.stringify(choice.value)}>{choice.label}</option>)}
      </select>
    )
  } else if (type === 'number' || type === 'integer') {
    input = <input type="number" name={path} step={type === 'integer' ? 1 : 'any'} min={schema.minimum} max={schema.maximum} value={String(value ?? '')} onInput={set} />
  } else if (type === 'string') {
    input = <input type="text" name={path} value={String(value ?? '')} onInput={set} />
  } else {
    input = <textarea name={path} rows={3} placeholder="JSON" value={String(value ?? '')} onInput={set} />
  }
  return <label class="field"><span>{title}</span>{input}{help}</label>
}

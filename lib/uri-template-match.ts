/**
 * RFC 6570 URI Templates, matching: a URI read back into the variables of a template, in time
 * linear in the URI's length.
 *
 * A template compiles to a small program for a Pike VM (Thompson's construction, with Pike's
 * threads carrying capture positions): every position of the URI is visited once, by at most one
 * thread per instruction, so a match costs O(uri length x program size) whatever the template.
 * A backtracking RegExp with two adjacent or reserved expressions (`{a}{b}`, `{+a}/{+b}`) tries
 * O(n^2) splits of a URI that does not match: a 156 KiB URI held the event loop for 12 s. Thread
 * priority follows the order a backtracking engine would try, so the captures are the ones a
 * greedy, leftmost RegExp would give.
 */

import { OPERATORS, parseTemplate, type Expression, type Part } from './uri-template-parse.ts'

/** One VM instruction. */
type Instruction =
  | { op: 'char'; char: string }
  /** Any one character not in `except` (`.` of a RegExp is this, with line terminators as `except`). */
  | { op: 'class'; except: string }
  /** Continue at `first`, and (at lower priority) at `second`. */
  | { op: 'split'; first: number; second: number }
  | { op: 'jump'; to: number }
  | { op: 'save'; slot: number }
  | { op: 'match' }

/** What the regular expression of a template is built from. */
type Node =
  | { type: 'literal'; text: string }
  | { type: 'class'; except: string }
  | { type: 'star'; node: Node }
  | { type: 'optional'; node: Node }
  | { type: 'group'; index: number; node: Node }
  | { type: 'sequence'; nodes: Node[] }

/** What a capture group of the program reads: one variable of an expression, or (index -1) a whole query. */
export interface Capture { expression: Expression; index: number }

/** The compiled matcher of a template. */
export interface Program {
  instructions: Instruction[]
  captures: Capture[]
}

const LINE_TERMINATORS = '\n\r\u2028\u2029'
const literal = (text: string): Node => ({ type: 'literal', text })
const except = (chars: string): Node => ({ type: 'class', except: chars })
const star = (node: Node): Node => ({ type: 'star', node })
const optional = (node: Node): Node => ({ type: 'optional', node })
const sequence = (...nodes: Node[]): Node => ({ type: 'sequence', nodes })

/** The matcher of a parsed template: its VM program and what each capture group reads. */
export function compileMatcher(parts: Part[]): Program {
  const captures: Capture[] = []
  const group = (capture: Capture, node: Node): Node => {
    captures.push(capture)
    return { type: 'group', index: captures.length - 1, node }
  }
  const nodes: Node[] = []
  for (let p = 0; p < parts.length; p++) {
    const part = parts[p]!
    if (typeof part === 'string') { nodes.push(literal(part)); continue }
    const { operator, vars } = part
    if (operator === '?' || operator === '&') {
      // Query parameters in any order: capture the whole query, read names out of it afterwards.
      nodes.push(optional(sequence(literal(operator), group({ expression: part, index: -1 }, star(except('#'))))))
      continue
    }
    if (operator === '' || operator === '+' || operator === '#') {
      // A simple value stops at '.' when a {.ext} follows it, so `{name}{.ext}` splits `logo.png`.
      const next = parts[p + 1]
      const isDotNext = next !== undefined && typeof next !== 'string' && next.operator === '.'
      const stop = operator === '' ? (isDotNext ? '/?#&,.' : '/?#&,') : operator === '+' ? '?#' : LINE_TERMINATORS
      const values: Node[] = []
      vars.forEach((_, index) => {
        if (index > 0) values.push(literal(','))
        values.push(group({ expression: part, index }, star(except(stop))))
      })
      nodes.push(operator === '#' ? optional(sequence(literal('#'), ...values)) : sequence(...values))
      continue
    }
    const first = OPERATORS[operator].first
    const stop = operator === '.' ? '/?#.' : operator === '/' ? '/?#' : ';/?#'
    vars.forEach((variable, index) => {
      const capture = { expression: part, index }
      if (variable.explode) nodes.push(group(capture, star(sequence(literal(first), star(except(stop))))))
      else if (operator === ';') nodes.push(optional(sequence(literal(';'), group(capture, sequence(literal(variable.name), optional(sequence(literal('='), star(except(stop)))))))))
      else nodes.push(optional(sequence(literal(first), group(capture, star(except(stop))))))
    })
  }
  const instructions: Instruction[] = []
  emit(sequence(...nodes), instructions)
  instructions.push({ op: 'match' })
  return { instructions, captures }
}

/** Appends the instructions of `node`; stars and optionals prefer to take input (greedy). */
function emit(node: Node, out: Instruction[]): void {
  switch (node.type) {
    case 'literal':
      for (const char of node.text) {
        // A character outside the BMP is two code units, as a RegExp without the u flag sees it.
        for (let i = 0; i < char.length; i++) out.push({ op: 'char', char: char[i]! })
      }
      return
    case 'class':
      out.push({ op: 'class', except: node.except })
      return
    case 'sequence':
      for (const child of node.nodes) emit(child, out)
      return
    case 'group':
      out.push({ op: 'save', slot: node.index * 2 })
      emit(node.node, out)
      out.push({ op: 'save', slot: node.index * 2 + 1 })
      return
    case 'optional': {
      const split = { op: 'split' as const, first: out.length + 1, second: 0 }
      out.push(split)
      emit(node.node, out)
      split.second = out.length
      return
    }
    case 'star': {
      const top = out.length
      const split = { op: 'split' as const, first: top + 1, second: 0 }
      out.push(split)
      emit(node.node, out)
      out.push({ op: 'jump', to: top })
      split.second = out.length
      return
    }
  }
}

/** Op codes of the flat form the VM runs (monomorphic arrays, no per-instruction objects). */
const OP_CHAR = 0
const OP_CLASS = 1
const OP_SPLIT = 2
const OP_JUMP = 3
const OP_SAVE = 4
const OP_MATCH = 5

/** A program flattened: op codes and two arguments per instruction, class sets by index. */
export interface FlatProgram { ops: Uint8Array; a: Int32Array; b: Int32Array; classes: string[]; slotCount: number }

/** The flat form of a program, which {@link run} executes. */
export function flatten(program: Program): FlatProgram {
  const { instructions } = program
  const ops = new Uint8Array(instructions.length)
  const a = new Int32Array(instructions.length)
  const b = new Int32Array(instructions.length)
  const classes: string[] = []
  instructions.forEach((instruction, pc) => {
    switch (instruction.op) {
      case 'char': ops[pc] = OP_CHAR; a[pc] = instruction.char.charCodeAt(0); break
      case 'class': ops[pc] = OP_CLASS; a[pc] = classes.push(instruction.except) - 1; break
      case 'split': ops[pc] = OP_SPLIT; a[pc] = instruction.first; b[pc] = instruction.second; break
      case 'jump': ops[pc] = OP_JUMP; a[pc] = instruction.to; break
      case 'save': ops[pc] = OP_SAVE; a[pc] = instruction.slot; break
      case 'match': ops[pc] = OP_MATCH; break
    }
  })
  return { ops, a, b, classes, slotCount: program.captures.length * 2 }
}

/**
 * Runs a program over the whole of `input`: the capture slots of the best (leftmost-greedy)
 * match, or undefined. `counter.steps` counts thread visits, at most 2 x (input length + 1) x
 * program size.
 */
export function run(program: FlatProgram, input: string, counter?: { steps: number }): number[] | undefined {
  const { ops, a, b, classes } = program
  const size = ops.length
  // The list (position + 1) that last visited each instruction: one thread per instruction per position.
  const seen = new Int32Array(size)
  let steps = 0
  // Threads of this position and of the next, as parallel arrays of pc and capture slots.
  let currentPcs = new Int32Array(size)
  let currentSlots: number[][] = new Array(size)
  let currentCount = 0
  let nextPcs = new Int32Array(size)
  let nextSlots: number[][] = new Array(size)
  let nextCount = 0
  // Depth-first, first branch first, with an explicit stack: a template of thousands of
  // expressions makes long chains of splits, too deep for recursion.
  const stackPcs = new Int32Array(size * 2 + 2)
  const stackSlots: number[][] = new Array(size * 2 + 2)
  const add = (toCurrent: boolean, start: number, startSlots: number[], position: number): void => {
    let top = 0
    stackPcs[top] = start
    stackSlots[top++] = startSlots
    while (top > 0) {
      const pc = stackPcs[--top]!
      const slots = stackSlots[top]!
      if (seen[pc] === position + 1) continue
      seen[pc] = position + 1
      steps++
      switch (ops[pc]) {
        case OP_JUMP: stackPcs[top] = a[pc]!; stackSlots[top++] = slots; break
        case OP_SPLIT:
          stackPcs[top] = b[pc]!; stackSlots[top++] = slots
          stackPcs[top] = a[pc]!; stackSlots[top++] = slots
          break
        case OP_SAVE: {
          const copy = slots.slice()
          copy[a[pc]!] = position
          stackPcs[top] = pc + 1; stackSlots[top++] = copy
          break
        }
        default:
          if (toCurrent) { currentPcs[currentCount] = pc; currentSlots[currentCount++] = slots }
          else { nextPcs[nextCount] = pc; nextSlots[nextCount++] = slots }
      }
    }
  }
  add(true, 0, new Array<number>(program.slotCount).fill(-1), 0)
  let matched: number[] | undefined
  for (let position = 0; position <= input.length && currentCount > 0; position++) {
    nextCount = 0
    const isEnd = position === input.length
    const code = isEnd ? -1 : input.charCodeAt(position)
    for (let t = 0; t < currentCount; t++) {
      steps++
      const pc = currentPcs[t]!
      const op = ops[pc]
      if (op === OP_MATCH) {
        // Anchored at both ends: only a thread at the end of the input matches, and it beats
        // every thread of lower priority, which are dropped.
        if (isEnd) { matched = currentSlots[t]; break }
        continue
      }
      if (isEnd) continue
      if (op === OP_CHAR ? a[pc] === code : !classes[a[pc]!]!.includes(input[position]!)) {
        add(false, pc + 1, currentSlots[t]!, position + 1)
      }
    }
    // The next list becomes the current one; the old arrays are reused.
    const pcs = currentPcs; currentPcs = nextPcs; nextPcs = pcs
    const slots = currentSlots; currentSlots = nextSlots; nextSlots = slots
    currentCount = nextCount
  }
  if (counter !== undefined) counter.steps = steps
  return matched
}

/**
 * How many steps the matcher of `template` takes on `uri` (thread visits of its VM), for tests and
 * capacity planning: never more than a small multiple of (uri length + 1) x the template's size.
 */
export function countMatchSteps(template: string, uri: string): { steps: number; instructions: number } {
  const program = flatten(compileMatcher(parseTemplate(template)))
  const counter = { steps: 0 }
  run(program, uri, counter)
  return { steps: counter.steps, instructions: program.ops.length }
}

/**
 * Reads one capture of a match into `values`, percent-decoded: false when it cannot be decoded or
 * a value that cannot hold a slash holds an encoded one (the URI then matches nothing).
 */
export function readCapture(expression: Expression, index: number, raw: string, values: Record<string, string | string[]>): boolean {
  const { operator, vars } = expression
  if (index === -1) {
    // A query: name=value pairs joined by &.
    const wanted = new Map(vars.map(v => [v.name, v]))
    for (const pair of raw.split('&')) {
      if (pair === '') continue
      const equals = pair.indexOf('=')
      const name = safeDecode(equals < 0 ? pair : pair.slice(0, equals))
      const value = safeDecode(equals < 0 ? '' : pair.slice(equals + 1))
      if (name === undefined || value === undefined) return false
      const variable = wanted.get(name)
      if (variable === undefined) continue
      if (variable.explode) {
        // Appended in place: a copy per repeat would make `?x=1&x=2&...` quadratic.
        const list = values[name]
        if (Array.isArray(list)) list.push(value)
        else values[name] = [value]
      } else {
        values[name] = value
      }
    }
    return true
  }
  const variable = vars[index]!
  // A value of `{id}`, `{.ext}`, `{/segment}` or `{;param}` never holds a '/' as the URI shows it,
  // so it must not gain one by decoding: `files://{name}` matching `files://..%2F..%2Fetc%2Fpasswd`
  // would hand a handler a path. A value that may hold slashes is `{+name}` (or `{#name}`).
  if (operator !== '+' && operator !== '#' && ENCODED_SLASH.test(raw)) return false
  if (operator === ';') {
    const equals = raw.indexOf('=')
    const value = safeDecode(equals < 0 ? '' : raw.slice(equals + 1))
    if (value === undefined) return false
    values[variable.name] = value
    return true
  }
  if (variable.explode && (operator === '/' || operator === '.')) {
    const items = raw.split(OPERATORS[operator].first).slice(1).map(safeDecode)
    if (items.some(item => item === undefined)) return false
    values[variable.name] = items as string[]
    return true
  }
  const value = safeDecode(raw)
  if (value === undefined) return false
  values[variable.name] = value
  return true
}

const ENCODED_SLASH = /%2f/i

function safeDecode(text: string): string | undefined {
  try { return decodeURIComponent(text) } catch { return undefined }
}

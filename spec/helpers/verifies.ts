import { it } from 'vitest'
import { requirements, type RequirementId } from '../requirements.ts'

/**
 * A test case that verifies one MUST of the spec, named `[id] name`. The id must exist in
 * `spec/requirements.ts`; an unknown id throws while the file loads, failing the run. The
 * requirements reporter counts the test toward that requirement's coverage, as it does the tests
 * a requirement lists in its `tests`.
 */
export function verifies(id: RequirementId, name: string, body: () => unknown | Promise<unknown>, timeout?: number): void {
  if (!Object.hasOwn(requirements, id)) throw new Error(`Unknown requirement id: ${id}`)
  // The id travels in the test's metadata, which the reporter reads: a name is only for people.
  it(`[${id}] ${name}`, ({ task }) => {
    (task.meta as { requirement?: string }).requirement = id
    return body()
  }, timeout)
}

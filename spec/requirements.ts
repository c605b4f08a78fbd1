import { requirements2025 } from './requirements/2025-11-25.ts'
import { requirements2026 } from './requirements/2026-07-28.ts'
import type { Requirement } from './requirements/types.ts'

export type { Party, Requirement, Revision } from './requirements/types.ts'

/**
 * The normative statements (MUST, MUST NOT, REQUIRED, SHALL) of the MCP specification, by id: every
 * one of the 2025-11-25 and 2026-07-28 pages, each with who it binds and the tests that verify it,
 * or marked out of an SDK's scope with the reason.
 *
 * A test names what it verifies in one of two ways: the requirement lists it in `tests`
 * (`'spec/<file>.spec.ts > <describe> > <test>'`), or the test is written with
 * `verifies(id, name, body)`. At the end of `vitest run`, the requirements reporter
 * (spec/helpers/requirements-reporter.ts) fails the run on a reference to a test that does not
 * exist, and prints the coverage per revision with every uncovered requirement, so the list and
 * the tests cannot drift apart.
 *
 * To add one: put it in the file of its revision (spec/requirements/<revision>.ts) with `must(...)`
 * or `outOfScope(...)`, under an id `<area>:<what>` (suffixed `@2026-07-28` for that revision).
 */
export const requirements = { ...requirements2025, ...requirements2026 } satisfies Record<string, Requirement>

export type RequirementId = keyof typeof requirements

import { configDefaults, defineConfig } from 'vitest/config'
import { RequirementsReporter } from './spec/helpers/requirements-reporter.ts'

/**
 * vitest's defaults, plus the requirements reporter beside the default one: at the end of a run it
 * prints which MUSTs of the MCP specification the tests cover (spec/requirements.ts), and fails the
 * run on a reference to a test that does not exist. Nothing under .bench/ (benchmark output, and
 * any tree a benchmark checked out there) is part of the suite.
 */
export default defineConfig({
  test: {
    reporters: ['default', new RequirementsReporter()],
    exclude: [...configDefaults.exclude, '.bench/**'],
  },
})

/**
 * The skills the conformance suite's `sep-2640-*` server scenarios (the skills extension,
 * 0.2.0-alpha.12) read: the folder examples/conformance/skills, served on a conformance server of
 * their own (skill files are resources, which the other suites count).
 */
import { fileURLToPath } from 'node:url'
import type { McpServer } from '../../actors/server.ts'
import { serveSkills } from '../../actors/server/skills.ts'
import { skillsDirectory } from '../../transports/skills-directory.ts'

export const SKILLS_DIRECTORY = fileURLToPath(new URL('./skills', import.meta.url))

/** Serves the example skills on `server`; resolves once they are served. */
export function registerSkillFixtures(server: McpServer): Promise<void> {
  return serveSkills(server, skillsDirectory(SKILLS_DIRECTORY)).ready
}

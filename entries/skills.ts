/**
 * `rxmcp/skills`: Skills (SEP-2640): serving a skills folder, reading and verifying skill manifests
 * and their frontmatter, and the client's skills API.
 */
export { ClientSkills } from '../actors/client.ts'
export type { LoadedSkill, SkillFile } from '../actors/client.ts'
export { serveSkills } from '../actors/server/skills.ts'
export type { ServeSkillsOptions, ServedSkills } from '../actors/server/skills.ts'
export { skillsDirectory, readSkills } from '../transports/skills-directory.ts'
export type { SkillsDirectoryOptions } from '../transports/skills-directory.ts'
export {
  SKILLS_EXTENSION, SKILL_MANIFEST, SKILL_LIMITS, SKILL_NAME, SkillVerificationError, sha256Digest, checkSkillEntry,
  verifySkillFile, readSkillEntry, skillNameOf, skillRootOf,
} from '../lib/skills.ts'
export type { SkillEntry, SkillResource, SkillFolder, SkillProblem } from '../lib/skills.ts'
export { readFrontmatter, parseYamlBlock } from '../lib/frontmatter.ts'
export type { Frontmatter } from '../lib/frontmatter.ts'

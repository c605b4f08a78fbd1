#!/usr/bin/env node
/**
 * The `rxmcp` command (package.json `bin`): turns on Node's compile cache, then runs the command
 * line (bin/cli.ts, which documents the commands).
 *
 * Node 22.1 and later keep V8's compiled code of the modules a process loads on disk
 * (`module.enableCompileCache()`, in the OS temporary directory unless `NODE_COMPILE_CACHE` names
 * another; `NODE_DISABLE_COMPILE_CACHE=1` turns it off), so the command's next start compiles
 * nothing it compiled before. Only modules loaded after the call benefit, hence the command line
 * is imported afterwards. Node 20 has no compile cache: there the call is skipped. The library
 * itself never turns the cache on: that is the application's choice for its own process.
 */
import * as nodeModule from 'node:module'

;(nodeModule as { enableCompileCache?: () => unknown }).enableCompileCache?.()
const { cli } = await import('./cli.ts')
process.exitCode = await cli(process.argv.slice(2))

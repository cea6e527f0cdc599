import { basename, relative } from 'node:path'
import { shellCommand } from './shell-word.js'

/** What `invocation` reads of the running process; the process's own by default. */
export interface InvocationOptions {
  readonly env: NodeJS.ProcessEnv
  readonly argv: readonly string[]
  readonly execArgv: readonly string[]
  readonly cwd: string
}

/**
 * The words that run this Warrant again from the folder it was started in, so a command a hint prints runs as printed:
 * `npm run -s warrant --` under `npm start` (it works only in the package's folder), `warrant` for an installed command
 * (its link on the PATH), else `node` with the script this process runs. `serve` printed the npm form to everyone, and
 * to a person who installed the package, outside its folder, it answered "Missing script". (`npx warrant` under npx.)
 *
 * @example invocation() // "npm run -s warrant --" under `npm start`; "node bin/warrant.js" for `node bin/warrant.js serve`
 */
export function invocation(options: Partial<InvocationOptions> = {}): string {
  const { env, argv, execArgv, cwd } = { env: process.env, argv: process.argv, execArgv: process.execArgv, cwd: process.cwd(), ...options } satisfies InvocationOptions
  if (env.npm_lifecycle_event === 'start' || env.npm_lifecycle_event === 'warrant') return 'npm run -s warrant --'
  if (env.npm_lifecycle_event === 'npx') return 'npx warrant'
  const script = argv[1]
  if (script === undefined || basename(script) === 'warrant') return 'warrant'
  const fromHere = relative(cwd, script)
  // the loader a script needs (tsx for src/) is kept; a profiler's or debugger's flags are not for the hint
  const kept = execArgv.filter((arg) => !/^--(inspect|cpu-prof|heap-prof|prof)/.test(arg))
  return shellCommand(['node', ...kept, fromHere.startsWith('..') ? script : fromHere])
}

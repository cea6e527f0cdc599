import { execFile } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { parse as parseYaml } from 'yaml'
import { ensureDemoData } from '../../src/demo/index.js'
import { createTempDir } from './stores.js'

const run = promisify(execFile)
const ROOT = new URL('../..', import.meta.url).pathname
/** tsx's loader as an absolute URL, so a subprocess can load TypeScript from any working directory. */
export const TSX_LOADER = import.meta.resolve('tsx')
/** The CLI entry point. */
export const CLI_ENTRY = join(ROOT, 'src/cli/bin.ts')

/** A temp folder holding a copy of the demo config that points at its own store and demo upstream. */
export async function createCliWorkspace(options: { readonly count?: number; readonly edit?: (raw: Record<string, any>) => void } = {}) {
  const dir = await createTempDir('warrant-cli-')
  const raw = parseYaml(readFileSync(join(ROOT, 'config/demo.yaml'), 'utf8')) as Record<string, any>
  raw.store = 'sqlite:./warrant.db'
  raw.resources.subscriptions.connector.url = 'sqlite:./demo.db'
  // the demo's audit key file lives beside its store: here, in this test's own folder
  raw.audit = { key: { file: 'audit.key', create: true } }
  options.edit?.(raw)
  const configPath = join(dir.path, 'warrant.json')
  writeFileSync(configPath, JSON.stringify(raw, null, 2))
  await ensureDemoData({ url: `sqlite:${join(dir.path, 'demo.db')}`, count: options.count ?? 3000 })
  return {
    dir: dir.path,
    configPath,
    /** Runs `warrant ARGS --config <this workspace>` as a real subprocess. */
    warrant: (args: readonly string[]) => runWarrant([...args, '--config', configPath], dir.path),
    /** The same, with `env` added to (or, undefined, removed from) its environment. */
    warrantWith: (args: readonly string[], env: Readonly<Record<string, string | undefined>>) => runWarrant([...args, '--config', configPath], dir.path, env),
    drop: () => dir.drop(),
  }
}

/** `warrant ARGS` as a real subprocess in `cwd`, the way an operator runs it: its exit code and output. `extraEnv` adds to (or, undefined, removes from) its environment. */
export async function runWarrant(args: readonly string[], cwd: string, extraEnv: Readonly<Record<string, string | undefined>> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, WARRANT_LOG_LEVEL: 'silent' }
  for (const [name, value] of Object.entries(extraEnv)) {
    if (value === undefined) delete env[name]
    else env[name] = value
  }
  delete env.WARRANT_TOKEN
  delete env.WARRANT_CONFIG
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', TSX_LOADER, CLI_ENTRY, ...args], { cwd, env, maxBuffer: 64 * 1024 * 1024 })
    return { code: 0, stdout, stderr }
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string }
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' }
  }
}

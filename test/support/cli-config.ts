import { execFile, spawn } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { parse as parseYaml } from 'yaml'
import { ensureDemoData } from '../../src/demo/index.js'
import { createStore, type Store } from '../../src/store/index.js'
import { createTempDir, createTestPostgresDatabase, type StoreKind } from './stores.js'

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
  // the config's store URL as a process outside the folder reaches it (a relative sqlite path is the folder's)
  const storeUrl: string = String(raw.store).startsWith('sqlite:./') ? `sqlite:${join(dir.path, String(raw.store).slice('sqlite:'.length))}` : String(raw.store)
  return {
    dir: dir.path,
    configPath,
    storeUrl,
    /** Runs `run` on the workspace's store, opened for it and closed after (a look, or a change, behind the CLI's back). */
    withStore: async <T>(run: (store: Store) => Promise<T>): Promise<T> => {
      const store = await createStore({ url: storeUrl })
      try {
        return await run(store)
      } finally {
        await store.close()
      }
    },
    /** Runs `warrant ARGS --config <this workspace>` as a real subprocess. */
    warrant: (args: readonly string[]) => runWarrant([...args, '--config', configPath], dir.path),
    /** The same, with `env` added to (or, undefined, removed from) its environment. */
    warrantWith: (args: readonly string[], env: Readonly<Record<string, string | undefined>>) => runWarrant([...args, '--config', configPath], dir.path, env),
    drop: () => dir.drop(),
  }
}

export type CliWorkspace = Awaited<ReturnType<typeof createCliWorkspace>>

/** An http resource whose credential is the environment variable `env`, on a port nothing listens on: it refuses only for its secret. */
export function httpResourceWithSecret(env: string): Record<string, unknown> {
  return {
    environment: { name: 'crm-prod' },
    connector: {
      kind: 'http',
      sources: [{ name: 'main', base_url: 'http://127.0.0.1:9/' }],
      credential: { scheme: 'Bearer', secret: { env } },
      list: { path: '/items', pagination: { style: 'cursor' } },
      get: { path: '/items/{id}' },
      version: { from: 'field', field: 'rev' },
    },
    fields: { id: 'string', status: 'string', rev: 'integer' },
    review_fields: ['id', 'status'],
  }
}

/** A CLI workspace whose store is of `kind`: its SQLite file, or a fresh PostgreSQL database dropped with it. */
export async function createCliWorkspaceOn(kind: StoreKind, options: { readonly count?: number; readonly edit?: (raw: Record<string, any>) => void } = {}): Promise<CliWorkspace> {
  const pg = kind === 'postgres' ? await createTestPostgresDatabase() : null
  try {
    const ws = await createCliWorkspace({
      ...options,
      edit: (raw) => {
        if (pg) raw.store = pg.url
        options.edit?.(raw)
      },
    })
    return {
      ...ws,
      drop: async () => {
        await ws.drop()
        await pg?.drop()
      },
    }
  } catch (error) {
    await pg?.drop()
    throw error
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

/**
 * `warrant serve --port 0 --config CONFIG` as a real subprocess, until what it printed satisfies `ready`.
 *
 * @example
 * const serve = await serveUntil(ws.configPath, ws.dir, (out) => /^Try: .*\n/m.test(out))
 * try { … serve.printed … } finally { await serve.stop() }
 */
export async function serveUntil(
  configPath: string,
  cwd: string,
  ready: (printed: string) => boolean,
  env: NodeJS.ProcessEnv = {},
): Promise<{ readonly printed: string; stop(): Promise<void> }> {
  const child = spawn(process.execPath, ['--import', TSX_LOADER, CLI_ENTRY, 'serve', '--port', '0', '--config', configPath], {
    cwd,
    env: { ...process.env, WARRANT_LOG_LEVEL: 'silent', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const stop = async () => {
    child.kill('SIGTERM')
    await new Promise((resolve) => (child.exitCode === null ? child.once('exit', resolve) : resolve(null)))
  }
  try {
    let out = ''
    const printed = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`serve never printed what was awaited: ${out}`)), 60_000)
      child.stdout.on('data', (chunk) => {
        out += String(chunk)
        if (ready(out)) {
          clearTimeout(timer)
          resolve(out)
        }
      })
      child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${out}`)))
    })
    return { printed, stop }
  } catch (error) {
    await stop()
    throw error
  }
}

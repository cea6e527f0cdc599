import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { loadConfigFile } from '../../../src/config/index.js'
import { createLogger, openGateway } from '../../../src/gateway/index.js'
import { fileURLToPath } from 'node:url'
import { CLI_ENTRY, TSX_LOADER } from '../../support/cli-config.js'

/** The installed entry point: the compiled CLI (dist/, built by `npm install` or `npm run build`). */
const COMPILED_ENTRY = fileURLToPath(new URL('../../../bin/warrant.js', import.meta.url))

/**
 * `warrant serve` as a real process; resolves with its base URL once it listens. `compiled`: run it as installed
 * (`bin/warrant.js`, the dist/ build), not from the sources through tsx. `env`: variables added to its environment.
 */
export async function startServe(configPath: string, options: { readonly compiled?: boolean; readonly env?: Record<string, string> } = {}): Promise<{ child: ChildProcess; base: string; stderr: () => string }> {
  // WARRANT_SERVE_CPU_PROF=dir: the server writes a CPU profile there when it exits (bench profiling only)
  const profile = process.env.WARRANT_SERVE_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.WARRANT_SERVE_CPU_PROF] : []
  const entry = options.compiled ? [COMPILED_ENTRY] : ['--import', TSX_LOADER, CLI_ENTRY]
  const child = spawn(process.execPath, [...profile, ...entry, 'serve', '--config', configPath, '--port', '0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, WARRANT_LOG_LEVEL: 'warn', ...options.env },
  })
  let stdout = ''
  let stderr = ''
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const base = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start:\n${stdout}\n${stderr}`)), 30_000)
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString()
      const match = /API:\s+(http:\/\/\S+?)\/v1\/resources/.exec(stdout)
      if (match) {
        clearTimeout(timer)
        resolve(match[1]!)
      }
    })
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}:\n${stdout}\n${stderr}`)))
  })
  return { child, base, stderr: () => stderr }
}

/**
 * `warrant ARGS` (serve, mcp) as a real process in `cwd`: resolves when it exits, or when it says it listens (then it
 * is stopped), with whether it listened and everything it wrote. Its stdin stays open, as a client's would.
 */
export function startUntilListening(args: readonly string[], cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; listened: boolean; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', TSX_LOADER, CLI_ENTRY, ...args], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  let listened = false
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`neither listened nor exited:\n${stdout}\n${stderr}`)), 60_000)
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString()
      if (!listened && /API:\s+http/.test(stdout)) {
        listened = true
        void stopServe(child, 'SIGTERM')
      }
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      resolve({ code, listened, stdout, stderr })
    })
  })
}

/** A server's environment as an operator's shell gives it: warnings logged, and WARRANT_AUDIT_KEY only where `extra` sets it. */
export function serverEnvWith(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, WARRANT_LOG_LEVEL: 'warn', ...extra }
  if (!('WARRANT_AUDIT_KEY' in extra)) delete env.WARRANT_AUDIT_KEY
  return env
}

export async function stopServe(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = once(child, 'exit')
  child.kill(signal)
  await exited
}

/** An agent token (the actions given, on one resource) and reviewer tokens, issued in the store the config names, before any serve starts. */
export async function issueTokens(configPath: string, scope: { readonly resource: string; readonly actions: readonly string[] }, reviewers = 1): Promise<{ agentToken: string; reviewerTokens: string[] }> {
  const setup = await openGateway({ config: loadConfigFile(configPath), executors: false, log: createLogger({ level: 'silent' }) })
  try {
    const agentToken = (await setup.principals.issue({ name: 'agent', role: 'agent', scopes: { resources: [scope.resource], actions: [...scope.actions] } })).token
    const reviewerTokens: string[] = []
    for (const name of ['alice', 'bob', 'carol'].slice(0, reviewers)) reviewerTokens.push((await setup.principals.issue({ name, role: 'reviewer' })).token)
    return { agentToken, reviewerTokens }
  } finally {
    await setup.close()
  }
}

/** An agent token (set_role on `users`) and a reviewer token. */
export async function issueUsersTokens(configPath: string): Promise<{ agentToken: string; reviewerToken: string }> {
  const { agentToken, reviewerTokens } = await issueTokens(configPath, { resource: 'users', actions: ['set_role'] })
  return { agentToken, reviewerToken: reviewerTokens[0]! }
}

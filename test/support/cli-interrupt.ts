import { spawn } from 'node:child_process'
import { CLI_ENTRY, TSX_LOADER } from './cli-config.js'

/**
 * `warrant ARGS` as a real process, sent SIGINT (or `signal`) once its stderr (progress lines every 50 ms) matches
 * `ready`; resolves with its exit code and everything it wrote.
 */
export async function interruptCliWhen(dir: string, args: readonly string[], ready: RegExp, signal: NodeJS.Signals = 'SIGINT'): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', TSX_LOADER, CLI_ENTRY, ...args], {
    cwd: dir,
    env: { ...process.env, WARRANT_LOG_LEVEL: 'silent', WARRANT_PROGRESS_INTERVAL_MS: '50' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  await new Promise<void>((resolve) =>
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString()
      if (ready.test(stderr)) resolve()
    }),
  )
  child.kill(signal)
  const code = await exited
  return { code, stdout, stderr }
}

/**
 * `warrant ARGS` as a real process, sent `signal` once `ready()` (polled every 10 ms, e.g. a look at the store) says
 * the moment has come: for a command that prints nothing while it works. Resolves with its exit code and output;
 * `interrupted` is false when the process exited before `ready()` ever held.
 */
export async function interruptCliOnceReady(
  dir: string,
  args: readonly string[],
  ready: () => Promise<boolean>,
  signal: NodeJS.Signals = 'SIGINT',
): Promise<{ code: number | null; stdout: string; stderr: string; interrupted: boolean }> {
  const child = spawn(process.execPath, ['--import', TSX_LOADER, CLI_ENTRY, ...args], {
    cwd: dir,
    env: { ...process.env, WARRANT_LOG_LEVEL: 'silent' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()))
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()))
  let exitedYet = false
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      exitedYet = true
      resolve(code)
    }),
  )
  let interrupted = false
  while (!exitedYet) {
    if (await ready()) {
      interrupted = child.kill(signal)
      break
    }
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  const code = await exited
  return { code, stdout, stderr, interrupted }
}

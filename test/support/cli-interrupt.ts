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

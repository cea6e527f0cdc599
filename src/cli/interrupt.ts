/**
 * What a command must undo before Ctrl-C or SIGTERM ends the process (bin.ts exits right after): `warrant select`
 * and `warrant recover` remove the selection they were building, which nothing else would ever finish or remove.
 * Each command registers only what it started itself: another process's work on a shared store is never touched.
 */

type Cleanup = (reason: Error) => Promise<void>

const cleanups = new Set<Cleanup>()
let interrupted = false

/** An interrupt, as the reason an aborted call rejects with: recognised, so it is never reported as a bug. */
export class InterruptedError extends Error {
  constructor(signal: string) {
    super(`interrupted (${signal})`)
    this.name = 'InterruptedError'
  }
}

/**
 * Registers `cleanup` to run if the process is interrupted; returns the function that unregisters it (call it
 * once the work is done, so a late Ctrl-C does not undo a finished answer).
 */
export function onInterrupt(cleanup: Cleanup): () => void {
  cleanups.add(cleanup)
  return () => cleanups.delete(cleanup)
}

/** True once a signal interrupted this process: a failure after that is the interrupt's, not a bug. */
export function wasInterrupted(): boolean {
  return interrupted
}

/**
 * Runs every registered cleanup with the interrupt as its reason, waiting at most `timeoutMs`: a cleanup stuck on
 * an unreachable store must not keep a process the operator asked to stop.
 */
export async function runInterruptCleanups(signal: string, timeoutMs: number): Promise<void> {
  interrupted = true
  const reason = new InterruptedError(signal)
  const pending = [...cleanups].map((cleanup) => cleanup(reason).catch(() => undefined))
  cleanups.clear()
  let timer: NodeJS.Timeout | undefined
  await Promise.race([Promise.all(pending), new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))])
  clearTimeout(timer)
}

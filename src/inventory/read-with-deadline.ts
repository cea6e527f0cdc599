import type { Filter } from '../contract/index.js'
import type { ReadPageResult, ReadSession } from '../connectors/connector.js'

export type Read =
  | { readonly kind: 'result'; readonly result: ReadPageResult }
  | { readonly kind: 'deadline' }
  | { readonly kind: 'threw'; readonly message: string }

/** setTimeout fires at once for longer delays; a deadline that long is, in practice, no deadline. */
const MAX_TIMER_MS = 2_147_483_647

class DeadlineReached extends Error {
  override readonly name = 'DeadlineReached'
}

/** One page read, aborted (and abandoned, if the connector ignores the signal) when the deadline passes. */
export async function readWithDeadline(
  session: ReadSession,
  request: { source: string; filter: Filter; position: string | null; pageSize: number },
  remainingMs: number,
  callerSignal: AbortSignal | undefined,
): Promise<Read> {
  const controller = new AbortController()
  let timer: ReturnType<typeof setTimeout> | undefined
  let onCallerAbort: (() => void) | undefined
  const deadline = new Promise<Read>((resolve) => {
    timer = setTimeout(() => {
      controller.abort(new DeadlineReached('the walk deadline passed'))
      resolve({ kind: 'deadline' })
    }, Math.min(remainingMs, MAX_TIMER_MS))
  })
  const cancelled = new Promise<never>((_, reject) => {
    if (!callerSignal) return
    onCallerAbort = () => {
      controller.abort(callerSignal.reason)
      reject(callerSignal.reason)
    }
    if (callerSignal.aborted) onCallerAbort()
    else callerSignal.addEventListener('abort', onCallerAbort, { once: true })
  })
  cancelled.catch(() => {})
  try {
    const page = Promise.resolve()
      .then(() => session.readPage({ ...request, signal: controller.signal }))
      .then(
        (result): Read => ({ kind: 'result', result }),
        (error: unknown): Read => (controller.signal.reason instanceof DeadlineReached ? { kind: 'deadline' } : { kind: 'threw', message: messageOf(error) }),
      )
    const read = await Promise.race([page, deadline, cancelled])
    if (callerSignal?.aborted) throw callerSignal.reason
    return read
  } finally {
    clearTimeout(timer)
    if (onCallerAbort) callerSignal?.removeEventListener('abort', onCallerAbort)
  }
}

/** Upstreams throw anything; only its text goes into a reason. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

import type { Context } from 'hono'
import { type Envelope, isWarrantError } from '../contract/index.js'
import type { StreamEnd } from '../audit/index.js'
import type { ApiEnv } from './authenticate.js'

/** A walk that hands each page's items to `onPage` and resolves with the envelope's other fields. */
export type EnvelopeWalk = (
  onPage: (items: readonly Record<string, unknown>[]) => Promise<void>,
  signal: AbortSignal,
) => Promise<Omit<Envelope, 'items'>>

/** Characters of items queued ahead of the client before the walk waits for it to take them. */
const HIGH_WATER_CHARS = 1 << 20

/** Text handed to the connection per pull, at most: how finely a client's reading is seen. */
const CHUNK_CHARS = 64 * 1024

/** How long a streamed answer waits, by default, for a client that reads nothing of it before cutting it. */
export const DEFAULT_STREAM_STALL_MS = 60_000

/** How long the stream waits for its client, and for how long the walk may wait for it. */
export interface StreamEnvelopeOptions {
  /** the client took nothing for this long: the answer is cut (default DEFAULT_STREAM_STALL_MS) */
  readonly stallMs?: number | undefined
  /** the walk's deadline_ms: past it the walk no longer waits for its client, so it ends on its own deadline */
  readonly deadlineMs?: number | undefined
}

/**
 * An envelope answered as the walk reads it: `{"items":[` and each page's items as they arrive, then the
 * completeness fields, known only at the end, after the items. A full search of 100,000 records is never held
 * whole (as objects and as one string of its JSON), and the client receives while the walk goes on.
 *
 * What a client can rely on:
 * - a walk refused before its first item (a bad cursor, a filter on a denied field, no session) is that error's
 *   answer, with its status, as before; so is an answer without items;
 * - once the first item is sent the status is 200; the walk's end (complete or not, with its reasons) is in the
 *   fields after the items. A walk that fails with an error after that (not an upstream's partial answer, which
 *   is a reason like any other, but a fault of the gateway) cuts the connection: the body is not valid JSON and
 *   cannot be read as a shorter answer;
 * - a client that stops reading holds the walk (at most ~1 MB of items and one upstream page ahead) until the walk's
 *   deadline_ms, which then ends it (its upstream read released; the end waits, queued after the items); a client
 *   that takes nothing for `stallMs` is cut the same way as a fault (the walk ends, the connection is closed, its
 *   audit row says `failed`, `stopped: "client_stalled"`); one that disconnects ends it;
 * - a walk whose request's token stops holding while it runs (the route's `beforePage`) is cut the same way, its row
 *   `stopped: "authority_lapsed"`.
 *
 * The request's audit row is written once the connection has taken every item, before the end leaves (or when the
 * walk fails, the client leaves or is cut); its `items` are those the connection took whole.
 *
 * @example
 * app.openapi(search, (c) => streamEnvelope(c, (onPage, signal) => walkResource(resource, request, { cursorCodec, signal }, onPage), log, { stallMs }))
 */
export async function streamEnvelope(c: Context<ApiEnv>, walk: EnvelopeWalk, onFault: (error: unknown) => void, options: StreamEnvelopeOptions = {}): Promise<Response> {
  const encoder = new TextEncoder()
  const abort = new AbortController()
  const stallMs = options.stallMs ?? DEFAULT_STREAM_STALL_MS
  const deadlineAt = options.deadlineMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + options.deadlineMs
  /** the items' JSON not yet handed to the connection, each text with the items it completes, and how far it went */
  const pending: { readonly text: string; readonly items: number; at: number }[] = []
  let pendingChars = 0
  /** items the walk handed over, and those the connection took whole */
  let written = 0
  let sent = 0
  let resumeWalk: (() => void) | null = null
  let wakePull: (() => void) | null = null
  let walkEnd: { readonly summary: Omit<Envelope, 'items'> } | null = null
  let ended = false
  let waiting: ReturnType<typeof setTimeout> | undefined
  let firstItem: () => void = () => undefined
  const itemSent = new Promise<void>((resolve) => (firstItem = resolve))

  /** Until the client took some of what is queued, or the walk's deadline passed. */
  const clientTook = () =>
    new Promise<void>((resolve) => {
      const timer = Number.isFinite(deadlineAt) ? setTimeout(resolve, Math.max(0, deadlineAt - Date.now())) : undefined
      resumeWalk = () => {
        clearTimeout(timer)
        resolve()
      }
    })
  const onPage = async (items: readonly Record<string, unknown>[]) => {
    // the client left or was cut: nothing more is sent (the walk ends on the signal)
    if (items.length === 0 || abort.signal.aborted) return
    // one JSON.stringify per page (the array's brackets cut off), not one per item
    const json = JSON.stringify(items)
    const text = (written === 0 ? '' : ',') + json.slice(1, -1)
    written += items.length
    pending.push({ text, items: items.length, at: 0 })
    pendingChars += text.length
    firstItem()
    wakePull?.()
    // the client reads slower than the walk: wait until it has taken what is queued, never past the walk's deadline
    while (pendingChars > HIGH_WATER_CHARS && !abort.signal.aborted && Date.now() < deadlineAt) await clientTook()
    resumeWalk = null
  }

  const walking = walk(onPage, abort.signal)
  // refused before any item: the error's own answer (rethrown to the error mapping); no item at all: plain JSON
  const first = await Promise.race([walking, itemSent.then(() => null)])
  if (written === 0 && first !== null) {
    const { status, ...rest } = first
    return c.json({ status, items: [], ...rest }, 200)
  }

  // the audit trail keeps no answer for this request (reading a clone of the stream back would wait for the walk):
  // the stream hands it the walk's end instead, and the trail records the request then
  c.set('streamed_answer', true)
  const recorder = c.get('record_stream_end')
  /** How the answer ended, recorded once. */
  const finish = async (end: StreamEnd) => {
    if (ended) return
    ended = true
    clearTimeout(waiting)
    pending.length = 0
    try {
      await recorder?.(end)
    } catch (error) {
      onFault(error)
    }
  }
  /** The walk and the answer end: the client gets nothing more, and what the walk held is let go. */
  const stopWalk = (why: string) => {
    abort.abort(new Error(why))
    resumeWalk?.()
    wakePull?.()
  }
  /**
   * The client took nothing for `stallMs`: recorded, then the stream fails (the envelope has no end) and the server
   * lets go of the connection. Judged after the loop's I/O of this turn, as an export's stall is (export.ts).
   */
  const waitForClient = (ctrl: ReadableStreamDefaultController<Uint8Array>) => {
    const timer = setTimeout(
      () =>
        setImmediate(() => {
          if (waiting !== timer || ended) return
          const why = `the client of the search read nothing for ${stallMs} ms: cut`
          stopWalk(why)
          void finish({ outcome: 'failed', stopped: 'client_stalled', items: sent })
          ctrl.error(new Error(why))
        }),
      stallMs,
    )
    timer.unref?.()
    waiting = timer
  }
  pending.unshift({ text: '{"items":[', items: 0, at: 0 })
  const body = new ReadableStream<Uint8Array>(
    {
      start(ctrl) {
        walking.then(
          (summary) => {
            walkEnd = { summary }
            wakePull?.()
          },
          async (error: unknown) => {
            if (ended) return
            const left = abort.signal.aborted
            // the request's token stopped holding mid-walk (authorityRecheck): cut like a fault, but no fault of ours
            const lapsed = isWarrantError(error) && (error.code === 'unauthenticated' || error.code === 'forbidden')
            if (!left && !lapsed) onFault(error)
            await finish({ outcome: left ? 'client_closed' : 'failed', items: sent, ...(lapsed && !left ? { stopped: 'authority_lapsed' as const } : {}) })
            // an error, not a close: the client must not take what it got for the whole answer
            ctrl.error(error)
          },
        )
      },
      async pull(ctrl) {
        clearTimeout(waiting)
        waiting = undefined
        for (;;) {
          if (ended) return
          const head = pending[0]
          if (head !== undefined) {
            let n = Math.min(CHUNK_CHARS, head.text.length - head.at)
            // never between the two halves of a surrogate pair (each would be encoded as U+FFFD)
            const code = head.text.charCodeAt(head.at + n - 1)
            if (head.at + n < head.text.length && code >= 0xd800 && code <= 0xdbff) n -= 1
            ctrl.enqueue(encoder.encode(head.text.slice(head.at, head.at + n)))
            head.at += n
            pendingChars -= n
            if (head.at === head.text.length) {
              pending.shift()
              sent += head.items
            }
            if (pendingChars <= HIGH_WATER_CHARS) resumeWalk?.()
            return waitForClient(ctrl)
          }
          if (walkEnd !== null) {
            const { summary } = walkEnd
            // the request's audit row, with how the walk ended, is written once the connection took every item,
            // before the answer's last bytes leave
            await finish({ outcome: 'ok', items: sent, envelope: { complete: summary.complete, incomplete_reasons: summary.incomplete_reasons } })
            const rest = JSON.stringify(summary)
            ctrl.enqueue(encoder.encode(rest === '{}' ? ']}' : `],${rest.slice(1)}`))
            ctrl.close()
            return
          }
          await new Promise<void>((resolve) => (wakePull = resolve))
          wakePull = null
        }
      },
      async cancel() {
        stopWalk('the client closed the connection')
        await finish({ outcome: 'client_closed', items: sent })
      },
    },
    { highWaterMark: 1 },
  )
  return c.body(body, 200, { 'content-type': 'application/json' })
}

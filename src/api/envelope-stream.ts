import type { Context } from 'hono'
import type { Envelope } from '../contract/index.js'
import type { StreamEnd } from '../audit/index.js'
import type { ApiEnv } from './authenticate.js'

/** A walk that hands each page's items to `onPage` and resolves with the envelope's other fields. */
export type EnvelopeWalk = (
  onPage: (items: readonly Record<string, unknown>[]) => Promise<void>,
  signal: AbortSignal,
) => Promise<Omit<Envelope, 'items'>>

/** Bytes written ahead of the client before the walk waits for it to read. */
const HIGH_WATER_BYTES = 1 << 20

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
 * - a client that stops reading holds the walk (at most ~1 MB and one upstream page ahead); one that disconnects ends it.
 *
 * @example
 * app.openapi(search, (c) => streamEnvelope(c, (onPage, signal) => walkResource(resource, request, { cursorCodec, signal }, onPage), log))
 */
export async function streamEnvelope(c: Context<ApiEnv>, walk: EnvelopeWalk, onFault: (error: unknown) => void): Promise<Response> {
  const encoder = new TextEncoder()
  const abort = new AbortController()
  /** the items' JSON read before the stream exists (the first page), then the stream's controller */
  const ahead: string[] = []
  let controller: ReadableStreamDefaultController<Uint8Array> | null = null
  let resume: (() => void) | null = null
  let written = 0
  let firstItem: () => void = () => undefined
  const itemSent = new Promise<void>((resolve) => (firstItem = resolve))

  const onPage = async (items: readonly Record<string, unknown>[]) => {
    // the client left: nothing more is sent (the walk ends on the signal)
    if (items.length === 0 || abort.signal.aborted) return
    // one JSON.stringify per page (the array's brackets cut off), not one per item
    const json = JSON.stringify(items)
    const text = (written === 0 ? '' : ',') + json.slice(1, -1)
    written += items.length
    if (controller === null) ahead.push(text)
    else controller.enqueue(encoder.encode(text))
    firstItem()
    // the client reads slower than the walk: wait until it has taken what is queued
    while (controller !== null && (controller.desiredSize ?? 1) <= 0 && !abort.signal.aborted) await new Promise<void>((r) => (resume = r))
  }

  const walking = walk(onPage, abort.signal)
  // refused before any item: the error's own answer (rethrown to the error mapping); no item at all: plain JSON
  const ended = await Promise.race([walking, itemSent.then(() => null)])
  if (written === 0 && ended !== null) {
    const { status, ...rest } = ended
    return c.json({ status, items: [], ...rest }, 200)
  }

  // the audit trail keeps no answer for this request (reading a clone of the stream back would wait for the walk):
  // the stream hands it the walk's end instead, and the trail records the request then
  c.set('streamed_answer', true)
  const recorder = c.get('record_stream_end')
  const recordEnd = async (end: StreamEnd) => {
    try {
      await recorder?.(end)
    } catch (error) {
      onFault(error)
    }
  }
  const body = new ReadableStream<Uint8Array>(
    {
      start(ctrl) {
        controller = ctrl
        ctrl.enqueue(encoder.encode(`{"items":[${ahead.splice(0).join('')}`))
        walking.then(
          async (summary) => {
            const envelope = { complete: summary.complete, incomplete_reasons: summary.incomplete_reasons }
            // a walk that ended anyway after its client left has no one to answer (the stream is closed)
            if (abort.signal.aborted) return recordEnd({ outcome: 'client_closed', items: written, envelope })
            // the request's audit row, with how the walk ended, is written before the answer's last bytes leave
            await recordEnd({ outcome: 'ok', items: written, envelope })
            if (abort.signal.aborted) return
            const rest = JSON.stringify(summary)
            ctrl.enqueue(encoder.encode(rest === '{}' ? ']}' : `],${rest.slice(1)}`))
            ctrl.close()
          },
          async (error: unknown) => {
            const left = abort.signal.aborted
            if (!left) onFault(error)
            await recordEnd({ outcome: left ? 'client_closed' : 'failed', items: written })
            // an error, not a close: the client must not take what it got for the whole answer
            ctrl.error(error)
          },
        )
      },
      pull() {
        resume?.()
        resume = null
      },
      cancel() {
        abort.abort(new Error('the client closed the connection'))
        resume?.()
        resume = null
      },
    },
    { highWaterMark: HIGH_WATER_BYTES, size: (chunk) => chunk.byteLength },
  )
  return c.body(body, 200, { 'content-type': 'application/json' })
}

import type { IncompleteReason } from '../contract/index.js'
import type { SourceGap } from './cursor-codec.js'

/** The latest instant a Date can hold: an upstream's absurd Retry-After names no time. */
const MAX_DATE_MS = 8.64e15

/**
 * A source the walk ended as SOURCE_UNAVAILABLE, in words that say what is true of it, and fields that agree. A
 * refusal (a 4xx, a redirect, paging that loops) would fail the same way if sent again: no wait is named, so the
 * envelope reads it as permanent. A source that asked the walk to wait longer than it waits, or rate limited or
 * failed it time after time, would likely be answered later: the reason names the wait in `retry_after_seconds`
 * (a new walk's, since this walk's continuation never asks the source again) and the time after which to try. A
 * position too long to carry in a continuation is neither: waiting would not change it, reading it through in one
 * call would. Nor are ids a keyset source repeats: the walk reads on, but rows sharing an id are lost whenever it
 * walks, until the id is unique.
 *
 * `note` is what the upstream said, known only in the part of the walk where the source ended; `now` dates the
 * wait from then (a later part's reason dates it from its own time, later than needed rather than too soon).
 */
export function unavailableReason(source: string, gap: SourceGap, note: string | undefined, now: number): IncompleteReason {
  const status = gap.status === undefined ? {} : { upstream_status: gap.status }
  const answered = gap.status === undefined ? '' : ` (it answered ${gap.status})`
  const wait = gap.wait ?? 0
  const after = now + wait * 1000 < MAX_DATE_MS ? `after ${new Date(now + wait * 1000).toISOString()}` : "once the upstream's wait is over"
  const later = `this walk's continuation does not ask it again, so the rest of its records are missing; a new walk can read them ${after}`
  switch (gap.ended) {
    case 'wait_too_long':
      return {
        code: 'SOURCE_UNAVAILABLE',
        message: `${note ?? `source "${source}" asked the walk to wait ${wait} s earlier in this walk${answered}, longer than a walk waits (execution.max_retry_after_seconds)`}; it asked for time, it did not refuse the request: ${later}`,
        source,
        retry_after_seconds: wait,
        ...status,
      }
    case 'rate_limited_repeatedly':
      return {
        code: 'SOURCE_UNAVAILABLE',
        message: `${note ?? `source "${source}" rate limited the walk time after time earlier in this walk, so the walk gave up on it`}; a rate limit lifts with time: ${later}`,
        source,
        retry_after_seconds: wait,
        ...status,
      }
    case 'failed_repeatedly':
      return {
        code: 'SOURCE_UNAVAILABLE',
        message: `${note ?? `source "${source}" failed time after time earlier in this walk${answered}, so the walk gave up on it`}; such a failure may clear with time: ${later}`,
        source,
        retry_after_seconds: wait,
        ...status,
      }
    case 'position_too_long':
      return {
        code: 'SOURCE_UNAVAILABLE',
        message:
          note ??
          `source "${source}" gave a next position too long for a continuation earlier in this walk, so the rest of its records cannot be read by continuing (nor by waiting); a walk that reads it through in one call (a larger budget) can`,
        source,
        ...status,
      }
    case 'ids_repeated':
      // not a failure: the source was read on to its end, but a row sharing an id with another is lost
      return {
        code: 'SOURCE_UNAVAILABLE',
        message: `${note ?? `source "${source}" returned records with an id already read earlier in this walk, though it reads in id order`}: its ids are not unique, so rows sharing an id were dropped, and rows past a repeated id may have been skipped. The walk did not stop at them, but which rows were lost cannot be known, and waiting or walking again meets the same ids: make the id unique upstream, or choose a unique field as id_field, before relying on this source being complete`,
        source,
        ...status,
      }
    case undefined:
      return {
        code: 'SOURCE_UNAVAILABLE',
        message: `${note ?? `source "${source}" failed earlier in this walk${answered}`}; the same request would fail the same way, so it is not retried and the rest of its records are missing`,
        source,
        ...status,
      }
  }
}

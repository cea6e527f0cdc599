import { mediaTypeOf } from './body-text.js'

/**
 * Why a 2xx answer to a read is not the answer asked for, by its own word, or null when it may be.
 *
 * 202 Accepted: the upstream took the request to answer it later (GitHub's statistics while it computes them, an
 * asynchronous search job), so its body says what it will hold, or nothing yet: an empty list there is "not
 * computed yet", never "none", and a record there may be one it has not applied.
 *
 * 206 Partial Content for a byte range (`Content-Range: bytes …`, or `multipart/byteranges`): a part of the
 * answer, which Warrant never asks for (it sends no Range), from a cache in front of the upstream. Whatever the
 * part parses as, the upstream says there is more of it. A 206 for a range of rows (PostgREST's `0-24/3573`, an
 * `items` unit) is a page like any other, judged by its paging signals.
 *
 * 203 Non-Authoritative Information: an intermediary (a transforming proxy, an edge rewrite) changed the upstream's
 * answer before it arrived. What it holds is the intermediary's word: a page it cut, or a paging signal it dropped,
 * would read as the upstream's own last page, and a record it rewrote as the upstream's record.
 *
 * A read so answered is read again later.
 */
export function unfinishedAnswer(source: string, status: number, headers: Headers): string | null {
  if (status === 202)
    return `source "${source}" answered 202 Accepted: it took the read to answer it later, so its body is not what it holds now`
  if (status === 203)
    return `source "${source}" answered 203 Non-Authoritative Information: something between Warrant and the upstream changed its answer, so what it holds is not the upstream's word`
  if (status !== 206) return null
  const range = headers.get('content-range')?.trim() ?? ''
  if (/^bytes\s/i.test(range))
    return `source "${source}" answered 206 Partial Content for ${shownRange(range)}: a part of its answer, never asked for (Warrant sends no Range), so what it lists is not the whole answer`
  if (mediaTypeOf(headers.get('content-type')) === 'multipart/byteranges')
    return `source "${source}" answered 206 Partial Content in parts (multipart/byteranges): parts of its answer, never asked for (Warrant sends no Range), so what it lists is not the whole answer`
  return null
}

/** A Content-Range as a message quotes it: cut, and quoted where it holds more than a range's characters. */
function shownRange(range: string): string {
  return /^bytes [\d*/-]{1,60}$/i.test(range) ? range : JSON.stringify(range.slice(0, 60))
}

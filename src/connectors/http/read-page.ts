import { matchesFilter, quotedKey, wellFormed, WarrantError } from '../../contract/index.js'
import type { ReadPageRequest, ReadPageResult, SourceRecord } from '../connector.js'
import type { CallSpec, HttpContext } from './context.js'
import { readPath } from './json-path.js'
import { buildListRequest, type ListRequest } from './list-request.js'
import { markerKey, readPagingSignals, totalKey } from './paging-signals.js'
import { evidenceOfMore } from './more-evidence.js'
import { errorInBody, readPaths } from './error-body.js'
import { repeatedId, sharedKey } from './repeated-ids.js'
import { settleEnd, type EndToConfirm, type PastEnd } from './end-check.js'
import { pageBelowFirst, settleOrigin } from './origin-probe.js'
import { keyOrderOf } from './key-order.js'
import { advance, decodePosition, encodePosition, overlaps, pastEnd, type PagePosition } from './pagination.js'
import { createShapeTally } from '../shape-tally.js'
import { duplicatesProblem, fieldsTouched, splitByItem } from './duplicate-members.js'
import { fieldPath, readId, toRecord } from './record.js'
import { answeredStatus, failureMessage, isRedirect, notJsonMessage, isTransientStatus, parseJsonBody, readRateLimit, retryAfterOf, statusMessage } from './upstream-answer.js'
import type { UpstreamExchange } from './upstream-request.js'
import { unfinishedAnswer } from './unfinished-answer.js'
import { unprovenShortEnd } from './short-end.js'

/**
 * Reads one page of one source. Clauses the config says the upstream can apply (`upstream_filters`,
 * `filter_params`) go upstream as query parameters or body placeholders; the whole filter is then checked
 * here on every item, so an upstream that ignores a filter cannot widen the result. Every upstream signal becomes a result, never an exception; only a malformed
 * request (unknown source, bad position or page size) throws.
 */
export async function readListPage(ctx: HttpContext, request: ReadPageRequest): Promise<ReadPageResult> {
  const list = ctx.config.list
  const base = ctx.baseOf(request.source)
  if (!Number.isInteger(request.pageSize) || request.pageSize < 1)
    throw new WarrantError('invalid_request', `pageSize must be a positive integer, not ${request.pageSize}`)
  const position = decodePosition(list.pagination, request.position, base)
  // an upstream that caps its pages answers no more than its cap: asking for more only hides which pages are full
  const asked = list.max_page_size === undefined ? request : { ...request, pageSize: Math.min(request.pageSize, list.max_page_size) }
  const read = await readAt(ctx, asked, base, position, false)
  if (read.kind === 'past_end') throw new Error('unreachable: a first read is never a confirming one')
  if (read.kind !== 'page') return read
  const { end, rawIds, ...page } = read
  // The end came on a page with items: one read past it, the only test of a total or has_more that may count
  // something else (this page, another flag); or on an empty first page with no signal at all, tested by the
  // next page number. Costs one request per walk so ended.
  const settled = end === undefined ? page : settleEnd(ctx, request.source, page, end, await readAt(ctx, { ...asked, position: encodePosition(end.position) }, base, end.position, true))
  // a page-number walk's first page: the page below it, read once per connector, is what proves no page comes first
  const below = settled.kind === 'page' ? pageBelowFirst(ctx, request) : null
  if (below === null) return settled
  const probe = await readAt(ctx, { ...asked, position: encodePosition(below) }, base, below, true)
  return settleOrigin(ctx, request.source, settled, rawIds ?? [], below.page, probe)
}

/** One list request at `position`; `confirming`: the read past a signalled end, which only counts the items. */
async function readAt(ctx: HttpContext, request: ReadPageRequest, base: URL, position: PagePosition, confirming: boolean): Promise<Interpreted> {
  const list = ctx.config.list
  // a read that re-checks the previous page's last record asks for one more, so the page keeps its size
  const overlap = overlaps(position) ? 1 : 0
  const size = Math.min(request.pageSize + overlap, list.max_page_size ?? Infinity)
  const sent = buildListRequest(ctx.config, ctx.resource.fields, base, position, request.filter, size)
  const url = sent.url
  const spec: CallSpec = {
    source: request.source,
    method: sent.method,
    endpoint: list.path,
    url,
    ...(sent.body === undefined ? {} : { body: sent.body }),
    ...(sent.headers ? { headers: sent.headers } : {}),
    ...(request.signal ? { signal: request.signal } : {}),
  }

  const result = await ctx.send(spec)
  const page = interpret(ctx, request, position, url, base, result, sent, confirming)
  ctx.report(spec, result, page.kind === 'past_end' ? (page.received === 0 ? 'page' : 'past_end') : page.kind)
  return page
}

/** A page with items the upstream called the last carries the read that tests it; a page-number walk's first, its ids before any filter. */
type Interpreted = Exclude<ReadPageResult, { kind: 'page' }> | (Extract<ReadPageResult, { kind: 'page' }> & { readonly end?: EndToConfirm; readonly rawIds?: readonly (string | undefined)[] }) | PastEnd

/** An id carried in a page position fits the 2048 base64url characters a position may hold. */
const MAX_CARRIED_ID_BYTES = 1536

function interpret(
  ctx: HttpContext,
  request: ReadPageRequest,
  position: PagePosition,
  url: URL,
  base: URL,
  result: UpstreamExchange,
  sent: Pick<ListRequest, 'allDelegated' | 'anyDelegated' | 'sizeSent'>,
  confirming: boolean,
): Interpreted {
  const list = ctx.config.list
  const source = request.source
  const failure = failureMessage(ctx, source, result)
  // a body cut at the byte limit would be cut again: only a timeout or an unreachable upstream may clear with time
  if (result.kind === 'too_large') return { kind: 'refused', status: result.status, message: failure ?? `source "${source}" answered too much` }
  if (failure !== null || result.kind !== 'response') {
    const answered = answeredStatus(result)
    return { kind: 'unavailable', message: failure ?? `source "${source}" gave no answer`, ...(answered === undefined ? {} : { status: answered }) }
  }
  const { status, headers, body } = result
  const parsed = parseJsonBody(body)
  // how far the walk of this source got, as the position says: the value of a cap the upstream stopped it at
  const reached = position.style === 'offset' ? position.offset : position.style === 'page' ? position.seen : undefined

  if (request.position !== null && list.cursor_expired.status.includes(status) && expiryCodeMatches(ctx, parsed))
    return { kind: 'cursor_expired', message: `${statusMessage(ctx, source, status, body)}; the position expired and the walk must start again` }
  // without a usable Retry-After no wait is named: the walk backs off as after a 5xx, never the write's 60 s
  if (status === 429) return { kind: 'rate_limited', ...readRateLimit(source, headers, ctx.now()) }
  if (status === 401 || status === 403)
    return { kind: 'forbidden', status, message: `${statusMessage(ctx, source, status, body)}; the credential may not read this source` }
  if (isRedirect(status))
    return { kind: 'refused', status, message: `source "${source}" answered with a redirect (${status}); redirects are never followed` }
  // past the first page, the same query with only the position moved was accepted before: a 422 now is the
  // upstream's result cap (GitHub search stops at 1000 results this way), not a bad query
  if (status === 422 && request.position !== null)
    return {
      kind: 'result_limit',
      status,
      message: `${statusMessage(ctx, source, status, body)}; the upstream will not page further for this query`,
      ...(reached === undefined ? {} : { limit: reached }),
    }
  if (isTransientStatus(status)) {
    const wait = retryAfterOf(headers, ctx.now())
    return { kind: 'unavailable', status, message: statusMessage(ctx, source, status, body), ...(wait === null ? {} : { retryAfterSeconds: wait }) }
  }
  if (status < 200 || status >= 300) return { kind: 'refused', status, message: statusMessage(ctx, source, status, body) }
  const unfinished = unfinishedAnswer(source, status, headers)
  if (unfinished !== null) {
    const wait = retryAfterOf(headers, ctx.now())
    return { kind: 'unavailable', status, message: unfinished, ...(wait === null ? {} : { retryAfterSeconds: wait }) }
  }
  if (!parsed.ok) return { kind: 'refused', status, message: notJsonMessage(source, result, parsed) }

  const payload = ctx.redact.deep(parsed.value)
  const unexpected = (why: string, configKey?: string): ReadPageResult => ({
    kind: 'refused',
    status,
    message: `source "${source}": unexpected list response: ${why}`,
    ...(configKey === undefined ? {} : { configKey }),
  })
  // a paging signal, a total or the items array named twice: the page cannot be read as the upstream means it
  const duplicates = splitByItem(list.items_path, parsed.duplicates)
  if (duplicates.outside.length > 0) return unexpected(duplicatesProblem(duplicates.outside))
  // a 2xx whose body says the request failed: the items beside it (none, or part) are not the list, nor its end
  const failed = errorInBody(payload, readPaths(list))
  if (failed !== null)
    return { kind: 'refused', status, message: `source "${source}" answered ${status}, but its body says the request failed (${failed}): the items beside it are not the list; read again later` }
  const listed = readPath(payload, list.items_path)
  if (!Array.isArray(listed)) return unexpected(`no array at items_path "${list.items_path}"`)
  let rawItems: readonly unknown[] = listed
  if (overlaps(position)) {
    const read = rawItems.length === 0 ? null : toRecord(ctx, rawItems[0], null, list.record_path, parsed.rounded)
    // a record with no usable version still names where the walk is
    const first = read === null ? undefined : readId(read)
    const found = read === null ? 'nothing' : first === undefined ? 'an unreadable item' : quotedKey(first)
    // the previous page's first record where its last should be: the offset went unheeded, the same page came back
    if (first !== undefined && position.firstId !== undefined && wellFormed(first) === position.firstId && list.pagination.style === 'offset')
      return unexpected(
        `the read at offset ${position.offset - 1} starts with the record the page before started with (${found}), not with its last ("${position.lastId}"): the upstream answered the same page again; is pagination.offset_param "${list.pagination.offset_param}" the parameter it skips by?`,
        'connector.list.pagination.offset_param',
      )
    // the position carries the id as UTF-8, where a lone surrogate became U+FFFD (such a record is unjudged anyway)
    if (first === undefined || wellFormed(first) !== position.lastId)
      return {
        kind: 'moved',
        message: `source "${source}" moved under the walk: the record just before offset ${position.offset} was "${position.lastId}", now it is ${found}`,
      }
    rawItems = rawItems.slice(1)
  }
  // after a read that found only the record before `offset`: this one, at `offset` itself, must not start with it
  if (position.style === 'offset' && position.boundaryId !== undefined && rawItems.length > 0 && list.pagination.style === 'offset') {
    const first = readId(toRecord(ctx, rawItems[0], null, list.record_path, parsed.rounded))
    if (first !== undefined && wellFormed(first) === position.boundaryId)
      return unexpected(
        `the read at offset ${position.offset} starts with ${quotedKey(first)}, the record the read before found just before that offset: the upstream answered the same record again; is pagination.offset_param "${list.pagination.offset_param}" the parameter it skips by?`,
        'connector.list.pagination.offset_param',
      )
  }
  // Page numbers carry no proof that the page moved: the first id is compared instead, before any filter, so an
  // upstream answering page 1 to every page number is caught even when none of its records match.
  const pageFirst = position.style === 'page' && list.pagination.style === 'page' && rawItems.length > 0 ? readId(toRecord(ctx, rawItems[0], null, list.record_path, parsed.rounded)) : undefined
  const repeated = pageFirst !== undefined && position.style === 'page' && wellFormed(pageFirst) === position.firstId
  // Repeating a page that was not the first, after every page so far moved on from the one before it (each was
  // compared), is an upstream that clamps page numbers to the last page it serves; a repeated first page may as
  // well be an upstream that ignores pagination.param
  const clamped = repeated && position.style === 'page' && list.pagination.style === 'page' && position.page - 1 > list.pagination.first
  // past a signalled end only the count matters: any item there means the signal did not count this list, and
  // the ended page again is the clamp: nothing lies past it
  if (confirming) return { kind: 'past_end', received: clamped ? 0 : rawItems.length, ids: clamped ? [] : rawItems.map((item) => readId(toRecord(ctx, item, null, list.record_path, parsed.rounded))) }

  const signals = readPagingSignals(list, payload, parsed.value, headers, parsed.rounded)
  if ('problem' in signals) return unexpected(signals.problem, signals.configKey)
  const { hasMore, total, marker } = signals
  if (marker !== null && marker !== undefined && ctx.redact.text(marker) !== marker) return unexpected('the next position carries the credential; refused')
  // An absent marker (not null, not "") is the end only where the end is plain anyway: an empty or short page,
  // or has_more false. On a full page it is a path the answer does not have, and the first page is not the list.
  const short = rawItems.length === 0 || (sent.sizeSent && rawItems.length < request.pageSize)
  // Past the first page the walk came by a Link header, so the upstream pages by it, and one that leaves it out
  // of its last page (full when the list is an exact multiple) has said where it ends.
  const linked = list.pagination.style === 'link_header' && request.position !== null
  if (marker === undefined && hasMore !== false && !short && list.pagination.style === 'link_header' && !linked)
    return unexpected(
      'the answer to a full first page has no Link header, so its end cannot be told from an upstream that pages some other way; set pagination to how this upstream pages (a Link header without rel="next" ends the walk)',
      'connector.list.pagination',
    )
  if (marker === undefined && hasMore !== false && !short && !linked)
    return unexpected(
      `${markerKey(list)} holds no ${list.pagination.style === 'cursor' ? 'cursor' : 'link'} in the answer to a full page${rawItems.length === list.max_page_size ? ` (max_page_size ${list.max_page_size})` : ''}, so its end cannot be told from a misread path; set it to where this upstream writes what follows (an explicit null or "" there ends the walk)`,
      list.pagination.style === 'cursor' ? 'connector.list.pagination.next_cursor_path' : 'connector.list.pagination.path',
    )
  // a collection-wide total counts the list the upstream pages only when no filter narrowed that list
  const pagedTotal = list.total_kind === 'collection' && sent.anyDelegated ? undefined : total
  // before the total is checked against the records received: a page answered twice is counted twice there
  if (repeated && position.style === 'page' && list.pagination.style === 'page') {
    if (clamped) {
      const again = `page ${position.page} answers page ${position.page - 1} again (it starts with "${pageFirst}"), though the pages before it moved on: the upstream clamps page numbers past the last page it serves`
      if (hasMore === true || pagedTotal !== undefined)
        return {
          kind: 'result_limit',
          message: `source "${source}": ${again}, while it says more records match (${hasMore === true ? `has_more_path "${list.has_more_path}" true` : `${totalKey(list)}: ${pagedTotal}, ${position.seen} read`}): it pages no further for this query`,
          limit: position.seen,
        }
      return unexpected(`${again}, at its end or at a cap, which cannot be told apart without a count; set total_path (or has_more_path) to where it says how many records match, and its end is known`, 'connector.list.total_path')
    }
    return unexpected(
      `page ${position.page} starts with the same record ("${pageFirst}") as the page before: the upstream returned the same page again; is pagination.param "${list.pagination.param}" the parameter it pages by?`,
    )
  }
  // a total below the records the walk has already received cannot be the count of the list it pages
  if (pagedTotal !== undefined && reached !== undefined && reached + rawItems.length > pagedTotal)
    return unexpected(
      `the upstream's total ${pagedTotal} (${totalKey(list)}) is below the ${reached + rawItems.length} records it has already sent, so it does not count this list; point it at the number of matching records, or leave it out`,
    )
  const lastKey = list.pagination.style === 'keyset' ? keyOf(ctx, rawItems.at(-1), list.pagination.field ?? ctx.resource.id_field) : undefined
  // Only the boundary record came back (an upstream capping pages at one item): the check passed but cannot
  // move the walk on, so the next read starts at the offset itself, unchecked, and says so.
  const boundaryOnly = overlaps(position) && rawItems.length === 0 && hasMore !== false && (pagedTotal === undefined || position.offset < pagedTotal)
  const facts = { received: rawItems.length, hasMore, total: pagedTotal, next: marker ?? null, requestUrl: url, lastKey }
  const step = boundaryOnly ? { next: { style: 'offset' as const, offset: position.offset, boundaryId: position.lastId } } : advance(position, facts, base)
  if ('problem' in step)
    return step.capped
      ? { kind: 'result_limit', message: `source "${source}": ${step.problem}`, ...(reached === undefined ? {} : { limit: reached }) }
      : unexpected(step.problem)

  // A record that does not match the declared fields cannot be judged by any filter, exclusion rule or
  // precondition: it is counted and named, never dropped silently, never kept as if absent meant null.
  const items: SourceRecord[] = []
  const shape = createShapeTally()
  // the id of the page's last item: the next read must find it just before where it starts
  let lastId: string | undefined
  // the id of the page's first item: the next page must not start with it again
  let firstId: string | undefined
  const skipped = listed.length - rawItems.length
  const ids: [string | undefined, unknown][] = []
  for (const [index, item] of rawItems.entries()) {
    const made = toRecord(ctx, item, null, list.record_path, parsed.rounded)
    lastId = readId(made)
    ids.push([lastId, readPath(item, list.record_path)])
    if (index === 0) firstId = lastId
    const touched = fieldsTouched(ctx, list.record_path, duplicates.byItem.get(index + skipped) ?? [])
    if ('problem' in made && made.versionless) shape.addVersionless(ctx.config.version.from === 'field' ? made.field : undefined)
    else if ('problem' in made) shape.add([made.field], [])
    else if (made.absent.length > 0 || made.mistyped.length > 0 || touched.length > 0) shape.add(made.absent, [...new Set([...made.mistyped, ...touched])])
    else if (matchesFilter(made.record.fields, request.filter, ctx.resource.fields)) items.push(made.record)
  }
  const twice = repeatedId(ids)
  if (twice !== null)
    return unexpected(
      `id_field "${ctx.resource.id_field}" is not unique: this one answer holds two different records under ${quotedKey(twice)}, so no reader can tell them apart (a walk keeps one, a write by id reaches one); set id_field to a field unique per record`,
      'id_field',
    )
  const keyField = list.pagination.style === 'keyset' ? (list.pagination.field ?? ctx.resource.id_field) : undefined
  const keys = keyField === undefined ? [] : rawItems.map((item) => keyOf(ctx, item, keyField))
  const tie = keyField === undefined ? null : sharedKey(keys.map((key, i) => [ids[i]![0], key] as const))
  if (tie !== null)
    return unexpected(
      `pagination.field "${keyField}" is not unique: records ${tie.ids.map(quotedKey).join(' and ')} of this page share the key ${JSON.stringify(tie.key)}, and each page starts after the last one's key, so records sharing a page's last key are never read; set pagination.field to a field unique per record (the id field)`,
      'connector.list.pagination.field',
    )
  // Each page starts after the last one's key, which reads every record only where the list is in that key's order:
  // a key at or before the one before it (the start key first) is the upstream's own order showing, and records it
  // lists later under a lower key than a page's last are never read. A key that cannot be compared proves nothing.
  const order = keyField === undefined || position.style !== 'keyset' ? null : keyOrderOf(position.key, keys, ctx.resource.fields[keyField])
  // (a page ending on its start key again is the same page again: the upstream ignores the parameter, said below)
  if (order?.kind === 'falls' && position.style === 'keyset' && lastKey !== position.key) {
    const record = ids[order.index]![0] === undefined ? `record ${order.index + 1} of the page` : `record ${quotedKey(ids[order.index]![0]!)}`
    const what = order.index === 0 ? `the page asked after key ${JSON.stringify(order.previous)} starts with ${record} (key ${JSON.stringify(order.key)})` : `${record} (key ${JSON.stringify(order.key)}) comes after key ${JSON.stringify(order.previous)} on this page`
    return unexpected(
      `pagination.field "${keyField}": ${what}, which does not follow it in that field's order (as a ${ctx.resource.fields[keyField!] ?? 'string'}): the list is not in the order of "${keyField}", and each page starts after the last one's key, so records listed later under a lower key are never read; make the list sort by "${keyField}" (a sort parameter in connector.list.query), or page another way`,
      'connector.list.pagination.field',
    )
  }
  const unjudged = shape.result()
  const following = step.next === null ? null : carrying(step.next, lastId, firstId)
  const next = following === null ? null : encodePosition(following)
  // an end signalled on a page with items is tested by one read past it, a short page too: an upstream that caps
  // its pages below the size asked (or ignores page_size_param) answers every page short, so a count of one
  // page or a flag meaning something else would end the walk after its first page and call it whole
  // and an empty first page that nothing else calls the end is tested by the page after it (`pastEnd`)
  const beyond = following === null ? pastEnd(position, facts, base) : null
  const end = beyond === null ? {} : { end: { ...beyond, position: carrying(beyond.position, lastId, firstId), received: rawItems.length } }
  if (next !== null && next === request.position) return unexpected('the upstream returned the same position again; the walk cannot advance')
  // An end for lack of a next cursor or link is only as good as the path it was looked for at: an answer that
  // says elsewhere that more follow (a cursor under another key, hasMore: true) is a config that misses it.
  const said = following === null && hasMore !== false && markerStyle(list.pagination.style) ? evidenceOfMore(list, payload, headers) : null
  if (said !== null) {
    const where = markerKey(list)
    const fix = where === null ? 'set pagination to how this upstream pages' : 'set it to where this upstream writes what follows'
    return unexpected(
      `the walk would end here for lack of a ${list.pagination.style === 'cursor' ? 'cursor' : 'next link'} at ${where ?? 'a Link header rel="next" (pagination.style "link_header")'}, yet the answer says more follow: ${said}; ${fix}`,
      list.pagination.style === 'cursor' ? 'connector.list.pagination.next_cursor_path' : list.pagination.style === 'next_link' ? 'connector.list.pagination.path' : 'connector.list.pagination',
    )
  }

  // a cursor walk's first page, short and without a cursor, ends the walk only where something else says so
  const unproven = following === null ? unprovenShortEnd(list, request.position === null, { marker, hasMore, total: pagedTotal, received: rawItems.length, sizeSent: sent.sizeSent, asked: request.pageSize }) : null
  if (unproven !== null) return unexpected(unproven, 'connector.list.pagination.next_cursor_path')
  const failedParts = partFailure(ctx, source, payload)
  if (typeof failedParts === 'string' && failedParts.startsWith('!')) return unexpected(failedParts.slice(1))
  return {
    kind: 'page',
    items,
    next,
    // a page past the first that did not re-read the previous page's last record, or holding a key that cannot be
    // compared, cannot vouch for the walk
    ...((position.style === 'offset' && position.offset > 0 && position.lastId === undefined) || order?.kind === 'unknown' ? { unchecked: true } : {}),
    // Parts of the source that failed outweigh the upstream's own budget flag: both leave the page short.
    ...(failedParts !== null
      ? { upstreamIncomplete: { code: 'SOURCE_UNAVAILABLE' as const, message: failedParts } }
      : signals.flagged && list.incomplete_flag
        ? { upstreamIncomplete: { code: list.incomplete_flag.reason } }
        : {}),
    ...totalFacts(list.total_kind, total, sent, totalKey(list)),
    received: rawItems.length,
    ...(unjudged ? { unjudged } : {}),
    ...end,
    ...(request.position === null && list.pagination.style === 'page' ? { rawIds: ids.map(([id]) => id) } : {}),
  }
}

/** Styles whose end is the absence of a next marker (a cursor, a body link, a Link header). */
function markerStyle(style: string): boolean {
  return style === 'cursor' || style === 'next_link' || style === 'link_header'
}

/** Offset pages overlap by one record, so the next read can tell whether the data moved in between; page reads carry the first id. */
function carrying(next: PagePosition, lastId: string | undefined, firstId: string | undefined): PagePosition {
  if (next.style === 'offset' && lastId !== undefined)
    // a one-record page starts and ends with the same record: its first tells nothing more
    return firstId !== undefined && firstId !== lastId && Buffer.byteLength(firstId) <= MAX_CARRIED_ID_BYTES ? { ...next, lastId, firstId } : { ...next, lastId }
  if (next.style === 'page' && firstId !== undefined && Buffer.byteLength(firstId) <= MAX_CARRIED_ID_BYTES) return { ...next, firstId }
  return next
}

/**
 * The total as the walk may use it. `total` keeps its meaning, the number of matches of this very query: a
 * filtered total when the upstream was asked to apply the whole filter, a collection total when there is no
 * filter. `totalKind` says what the upstream's number counts, so a collection-wide total is never taken for
 * a filtered one.
 */
function totalFacts(kind: 'filtered' | 'collection', total: number | undefined, sent: Pick<ListRequest, 'allDelegated' | 'anyDelegated'>, totalFrom: string) {
  if (total === undefined) return {}
  const countsQuery = kind === 'filtered' ? sent.allDelegated : sent.allDelegated && !sent.anyDelegated
  return { ...(countsQuery ? { total, totalFrom } : {}), upstreamTotal: { count: total, kind } }
}

/** The keyset field's value of a raw item, as a start key: a string or finite number, else null. */
function keyOf(ctx: HttpContext, item: unknown, field: string): string | number | null {
  if (item === undefined) return null
  const value = readPath(readPath(item, ctx.config.list.record_path), fieldPath(ctx, field))
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value)) ? value : null
}

/** Whether an error body carries the configured cursor-expired code (always, when no code is configured). */
function expiryCodeMatches(ctx: HttpContext, parsed: ReturnType<typeof parseJsonBody>): boolean {
  const { code_path, code } = ctx.config.list.cursor_expired
  if (code_path === undefined || code === undefined) return true
  if (!parsed.ok) return false
  const value = readPath(parsed.value, code_path)
  return value !== undefined && value !== null && String(value) === code
}

/**
 * `list.failed_parts`: how many parts (shards) of the source failed to answer this page. Null when none did;
 * a sentence naming them when some did; a sentence starting with "!" when the answer has no count there.
 */
function partFailure(ctx: HttpContext, source: string, payload: unknown): string | null {
  const declared = ctx.config.list.failed_parts
  if (!declared) return null
  const failed = readPath(payload, declared.path)
  if (failed === undefined || failed === null) return `!failed_parts path "${declared.path}" is missing from the answer`
  if (typeof failed !== 'number' || !Number.isInteger(failed) || failed < 0) return `!failed_parts path "${declared.path}" is not a count`
  if (failed === 0) return null
  const total = declared.total_path === undefined ? undefined : readPath(payload, declared.total_path)
  const of = typeof total === 'number' ? ` of ${total}` : ''
  return `source "${source}" answered, but ${failed}${of} of its parts (${declared.path}) failed; their records are missing from this page`
}

import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { decide, envelopeSchema, isWarrantError, type Envelope } from '../../src/contract/index.js'
import { createHttpConnector } from '../../src/connectors/http/index.js'
import { searchAll, type Budget, type WalkedRecord } from '../../src/inventory/index.js'
import { collection, httpResource } from '../connectors/http/fixtures.js'
import { sendJson, startUpstream, type SeenRequest, type TestUpstream } from '../connectors/http/upstream-server.js'
import { TEST_SCOPE, testCodec } from './helpers.js'

// Issue 13, items 1-5, and issue 11 item 8, each against real loopback upstreams: a failed source never gets a
// continuation that repeats its failing request, and every verdict follows from the reasons.

const ITEMS = collection(30)
const codec = testCodec()

type Behaviour = (req: SeenRequest) => { status: number; body: unknown; headers?: Record<string, string> } | null

/** A cursor-paged upstream (`?cursor=<offset>`, 5 per page) whose answers a test can override per request. */
async function cursorUpstream(items: readonly unknown[], override: { current: Behaviour }): Promise<TestUpstream> {
  return startUpstream((req, res) => {
    const special = override.current(req)
    if (special) return sendJson(res, special.status, special.body, special.headers ?? {})
    const at = Number(req.url.searchParams.get('cursor') ?? 0)
    const next = at + 5 < items.length ? String(at + 5) : null
    sendJson(res, 200, { items: items.slice(at, at + 5), next_cursor: next })
  })
}

const none: Behaviour = () => null

describe('issue 13: continuations that never loop, reasons that say what happened (loopback upstreams)', () => {
  const euBehaviour = { current: none }
  const usBehaviour = { current: none }
  let eu: TestUpstream
  let us: TestUpstream
  before(async () => {
    eu = await cursorUpstream(ITEMS.slice(0, 15), euBehaviour)
    us = await cursorUpstream(ITEMS.slice(15), usBehaviour)
  })
  after(async () => {
    await eu?.close()
    await us?.close()
  })

  const connector = () =>
    createHttpConnector({
      resource: httpResource({
        sources: [
          { name: 'eu', base_url: eu.origin },
          { name: 'us', base_url: us.origin },
        ],
      }),
    })
  const search = (budget: Budget = {}, cursor: string | null = null, clock?: { now(): number }) =>
    searchAll(connector(), { resource: 'items', filter: {}, pageSize: 5, cursor }, budget, {
      scope: TEST_SCOPE,
      cursorCodec: codec,
      ...(clock ? { clock } : {}),
    }).then((e) => {
      envelopeSchema.parse(e)
      return e
    })
  const reset = () => {
    euBehaviour.current = none
    usBehaviour.current = none
    eu.seen.length = 0
    us.seen.length = 0
  }

  it('(2) a 403 mid-walk is VISIBILITY_RESTRICTED with the status and what the upstream said; prove_absence refuses; no continuation repeats it', async () => {
    reset()
    euBehaviour.current = (req) =>
      req.url.searchParams.get('cursor') === '5' ? { status: 403, body: { error: { code: 'insufficient_scope', message: 'token cannot read region eu' } } } : null
    const first = await search({ maxPages: 3 })
    const reason = first.incomplete_reasons.find((r) => r.code === 'VISIBILITY_RESTRICTED')
    assert.ok(reason, JSON.stringify(first.incomplete_reasons))
    assert.equal(reason.source, 'eu')
    assert.equal(reason.upstream_status, 403)
    assert.match(reason.message, /source "eu" answered 403: .*insufficient_scope.*token cannot read region eu/)
    assert.doesNotMatch(reason.message, /did not answer/)
    assert.equal(decide(first, 'prove_absence').decision, 'refuse_or_request_review')
    assert.equal(first.continuation?.kind, 'next_cursor', 'the page budget stopped the walk of the other source')

    // follow every continuation there is: the 403 request is never sent again, and the gap stays reported
    const all = await follow(first, search)
    assert.ok(all.parts.length > 1)
    assert.equal(eu.seen.filter((r) => r.url.searchParams.get('cursor') === '5').length, 1, 'the failing request was never repeated')
    assert.equal(new Set(all.items.map((i) => `${i.source}:${i.id}`)).size, all.items.length)
    assert.equal(all.items.filter((i) => i.source === 'us').length, 15, 'the other source was walked to its end')
    for (const part of all.parts) {
      assert.ok(part.incomplete_reasons.some((r) => r.code === 'VISIBILITY_RESTRICTED' && r.upstream_status === 403))
      assert.equal(decide(part, 'prove_absence').decision, 'refuse_or_request_review')
    }
  })

  it('(1) a permanent failure (404) gets no continuation that repeats it, and decide refuses', async () => {
    reset()
    usBehaviour.current = () => ({ status: 404, body: { error: 'no such index' } })
    const result = await search()
    const reason = result.incomplete_reasons.find((r) => r.code === 'SOURCE_UNAVAILABLE')
    assert.ok(reason)
    assert.equal(reason.upstream_status, 404)
    assert.equal(reason.retry_after_seconds, undefined, 'permanent: no wait can fix it')
    assert.match(reason.message, /source "us" answered 404: .*no such index/)
    assert.equal(result.continuation, null)
    assert.equal(decide(result, 'prove_absence').decision, 'refuse_or_request_review')
  })

  it('(1) a transient failure (503 + Retry-After) gets retry_after with the upstream wait; decide answers retry_later; this walk gives up after a few attempts, naming the wait for a new one', async () => {
    reset()
    usBehaviour.current = () => ({ status: 503, body: { error: 'maintenance' }, headers: { 'retry-after': '17' } })
    let clock = Date.parse('2025-03-08T14:20:11Z')
    const now = { now: () => clock }
    let part = await search({}, null, now)
    const reason = part.incomplete_reasons.find((r) => r.code === 'SOURCE_UNAVAILABLE')
    assert.equal(reason?.retry_after_seconds, 17)
    assert.equal(reason?.upstream_status, 503)
    assert.match(reason?.message ?? '', /source "us" answered 503: .*maintenance/)
    assert.equal(part.continuation?.kind, 'retry_after')
    assert.equal(decide(part, 'prove_absence').decision, 'retry_later')
    let calls = 1
    while (part.continuation?.kind === 'retry_after') {
      clock = Date.parse(part.continuation.not_before)
      part = await search({}, part.continuation.cursor ?? null, now)
      calls += 1
      assert.ok(calls < 10, 'the retries end')
    }
    // past a few attempts in a row, this walk gives up on the source: no continuation asks it again. A 503 may
    // clear with time, so the reason names a wait for a new walk (it said "the same request would fail the same
    // way", and decide refused as if permanent)
    assert.equal(part.continuation, null)
    const ended = part.incomplete_reasons.find((r) => r.source === 'us')!
    assert.match(ended.message, /failed 6 times in a row, so the walk gave up on it; such a failure may clear with time: .*a new walk can read them after /)
    assert.doesNotMatch(ended.message, /fail the same way/)
    assert.equal(ended.retry_after_seconds, 17)
    assert.equal(decide(part, 'prove_absence').decision, 'retry_later')
    assert.equal(us.seen.length, calls)
    assert.equal(eu.seen.length, 3, 'the source that answered was read once, never again')
  })

  it('(3) an expired cursor on one of two sources while the walk hit its page budget: no continuation, retry_later for the whole attempt', async () => {
    reset()
    euBehaviour.current = (req) => (req.url.searchParams.get('cursor') === '5' ? { status: 410, body: { error: 'cursor expired' } } : null)
    const result = await search({ maxPages: 3 })
    const codes = result.incomplete_reasons.map((r) => r.code)
    assert.ok(codes.includes('CURSOR_EXPIRED') && codes.includes('CLIENT_LIMIT_REACHED'), codes.join())
    assert.equal(result.continuation, null, 'an expired part is never merged into a continued walk')
    assert.equal(decide(result, 'prove_absence').decision, 'retry_later')
  })

  it('(5) a 429, then a resume before not_before: refused with the time to wait, nothing sent upstream; after it, the walk resumes', async () => {
    reset()
    usBehaviour.current = (req) => (req.url.searchParams.get('cursor') === '10' ? { status: 429, body: { error: 'slow down' }, headers: { 'retry-after': '40' } } : null)
    let clock = Date.parse('2025-03-08T14:20:11Z')
    const now = { now: () => clock }
    const first = await search({}, null, now)
    const c = first.continuation
    assert.ok(c?.kind === 'retry_after' && c.cursor)
    assert.equal(c.retry_after_seconds, 40)
    assert.equal(decide(first, 'prove_absence').decision, 'retry_later')
    usBehaviour.current = none
    const sent = us.seen.length
    clock += 15_000
    await assert.rejects(search({}, c.cursor, now), (error: unknown) => {
      assert.ok(isWarrantError(error))
      assert.equal(error.code, 'rate_limited')
      assert.equal(error.status, 429)
      assert.match(error.message, /wait 25 s more/)
      assert.deepEqual(error.details, { retry_after_seconds: 25, not_before: c.not_before })
      return true
    })
    assert.equal(us.seen.length, sent, 'a refused continuation sends nothing upstream')
    clock = Date.parse(c.not_before)
    const rest = await search({}, c.cursor, now)
    assert.equal(rest.complete, true)
    assert.equal(new Set([...first.items, ...rest.items].map((i) => i.id)).size, 30)
  })
})

describe('issue 13 (4): the end of a capped result set is RESULT_LIMIT_REACHED with narrow_query, never a looping failure', () => {
  const CAP = 10
  let upstream: TestUpstream
  before(async () => {
    upstream = await startUpstream((req, res) => {
      const offset = Number(req.url.searchParams.get('offset') ?? 0)
      const limit = Number(req.url.searchParams.get('limit') ?? 5)
      if (req.url.pathname === '/capped' || req.url.pathname === '/flagged') {
        // GitHub search: past the cap, 422; its pages may also say incomplete_results: true
        if (offset >= CAP) return sendJson(res, 422, { message: `Only the first ${CAP} search results are available` })
        return sendJson(res, 200, { items: ITEMS.slice(offset, Math.min(offset + limit, CAP)), incomplete_results: req.url.pathname === '/flagged' })
      }
      // an empty page while the total says more remain
      sendJson(res, 200, { items: offset >= CAP ? [] : ITEMS.slice(offset, Math.min(offset + limit, CAP)), total: ITEMS.length })
    })
  })
  after(() => upstream?.close())

  // '/flagged' is the incomplete_flag upstream: its pages flag the cut before the 422 past the cap, and the
  // reason still carries the cap the walk reached.
  for (const path of ['/capped', '/flagged', '/empty-with-total']) {
    it(`${path}: RESULT_LIMIT_REACHED carrying the limit (${CAP}), a narrow_query continuation, continue_search; nothing requested twice`, async () => {
      upstream.seen.length = 0
      const connector = createHttpConnector({
        resource: httpResource({
          sources: [{ name: 'main', base_url: upstream.origin }],
          list: {
            path,
            page_size_param: 'limit',
            pagination: { style: 'offset' },
            ...(path === '/empty-with-total' ? { total_path: 'total' } : {}),
            ...(path === '/flagged' ? { incomplete_flag: { path: 'incomplete_results', reason: 'RESULT_LIMIT_REACHED' as const } } : {}),
          },
        }),
      })
      const result = await searchAll(connector, { resource: 'items', filter: {}, pageSize: 5 }, {}, { scope: TEST_SCOPE, cursorCodec: codec })
      envelopeSchema.parse(result)
      assert.deepEqual(
        result.incomplete_reasons.map((r) => r.code),
        ['RESULT_LIMIT_REACHED'],
        JSON.stringify(result.incomplete_reasons),
      )
      const reason = result.incomplete_reasons[0]!
      assert.deepEqual(reason.limit, { name: 'upstream_result_limit', value: CAP })
      assert.equal(result.items.length, CAP)
      assert.equal(result.continuation?.kind, 'narrow_query')
      assert.equal(decide(result, 'prove_absence').decision, 'continue_search')
      if (path !== '/empty-with-total') assert.match(reason.message, /answered 422: .*Only the first 10 search results are available/)
      const urls = upstream.seen.map((r) => r.rawUrl)
      assert.equal(new Set(urls).size, urls.length, 'no request was sent twice')
    })
  }
})

/** Follows every continuation that has a cursor, waiting out `retry_after` with a moved clock. */
async function follow(
  first: Envelope<WalkedRecord>,
  search: (budget: Budget, cursor: string | null, clock?: { now(): number }) => Promise<Envelope<WalkedRecord>>,
): Promise<{ parts: Envelope<WalkedRecord>[]; items: WalkedRecord[] }> {
  const parts = [first]
  let part = first
  for (let i = 0; i < 50; i++) {
    const c = part.continuation
    const cursor = c && 'cursor' in c && typeof c.cursor === 'string' ? c.cursor : null
    if (cursor === null) return { parts, items: parts.flatMap((p) => [...p.items]) }
    const at = c?.kind === 'retry_after' ? Date.parse(c.not_before) : Date.now()
    part = await search({ maxPages: 4 }, cursor, { now: () => Math.max(at, Date.now()) })
    parts.push(part)
  }
  throw new Error('the continuations did not end')
}

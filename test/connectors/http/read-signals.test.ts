import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createHttpConnector } from '../../../src/connectors/http/index.js'
import type { ReadPageResult } from '../../../src/connectors/connector.js'
import { callLog, collection, httpResource } from './fixtures.js'
import { delay, sendJson, startUpstream, type TestUpstream } from './upstream-server.js'

const ITEMS = collection(12)

/** One source named "main" at `origin`, cursor paging; `list` merges over the list config. */
function connectorAt(origin: string, list: Record<string, unknown> = {}, connector: Record<string, unknown> = {}) {
  const log = callLog()
  const conn = createHttpConnector({
    resource: httpResource({
      sources: [{ name: 'main', base_url: origin }],
      list: { path: '/items', page_size_param: 'limit', pagination: { style: 'cursor' }, ...list },
      ...connector,
    }),
    onCall: log.onCall,
  })
  return { conn, calls: log.calls }
}

async function firstPage(conn: ReturnType<typeof connectorAt>['conn'], position: string | null = null, source = 'main'): Promise<ReadPageResult> {
  const session = await conn.openSession()
  return session.readPage({ source, filter: {}, position, pageSize: 5 })
}

describe('http read signals', () => {
  let upstream: TestUpstream
  let other: TestUpstream
  before(async () => {
    other = await startUpstream((_req, res) => sendJson(res, 200, { items: ITEMS, next_cursor: null }))
    upstream = await startUpstream(async (req, res) => {
      const cursor = req.url.searchParams.get('cursor')
      if (req.url.pathname.startsWith('/tarpit/')) {
        await delay(6000)
        return sendJson(res, 200, { items: ITEMS, next_cursor: null })
      }
      switch (req.url.pathname) {
        case '/items':
          if (cursor === 'stale') return sendJson(res, 410, { error: 'cursor expired' })
          return sendJson(res, 200, { items: ITEMS.slice(0, 5), next_cursor: 'c5' })
        case '/coded':
          if (cursor === 'stale') return sendJson(res, 400, { error: { code: 'cursor_expired' } })
          if (cursor === 'bad') return sendJson(res, 400, { error: { code: 'bad_request' } })
          return sendJson(res, 200, { items: [], next_cursor: null })
        case '/slow':
          await delay(1000)
          return sendJson(res, 200, { items: ITEMS, next_cursor: null })
        case '/limited':
          return sendJson(res, 429, { error: 'slow down' }, { 'retry-after': req.url.searchParams.get('ra') ?? '' })
        case '/search':
          return sendJson(res, 200, { items: ITEMS.slice(0, 2), incomplete_results: true, next_cursor: null })
        case '/huge': {
          // 2 items fit, the body does not: the connector must not turn it into a short page
          const body = JSON.stringify({ items: ITEMS.slice(0, 2), padding: 'x'.repeat(5000), next_cursor: null })
          if (req.url.searchParams.get('chunked') === '1') {
            res.writeHead(200, { 'content-type': 'application/json' })
            res.write(body.slice(0, 2000))
            await delay(10)
            res.end(body.slice(2000))
          } else {
            res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) })
            res.end(body)
          }
          return
        }
        case '/foreign-link':
          return sendJson(res, 200, ITEMS.slice(0, 5), { link: `<${other.origin}/items?page=2>; rel="next"` })
        case '/redirect':
          res.writeHead(302, { location: `${other.origin}/items` })
          return res.end()
        case '/html':
          res.writeHead(200, { 'content-type': 'text/html' })
          return res.end('<html>maintenance</html>')
        case '/broken':
          return sendJson(res, 503, { error: 'backend down' })
        case '/filtered': {
          const status = req.url.searchParams.get('status')
          // the upstream applies status=…, and deliberately ignores everything else
          return sendJson(res, 200, { items: ITEMS.filter((i) => status === null || i.status === status), next_cursor: null, total: 4 })
        }
        case '/has-more-without-cursor':
          return sendJson(res, 200, { items: ITEMS.slice(0, 5), has_more: true })
        case '/no-id':
          return sendJson(res, 200, { items: [{ status: 'active', version: 1 }], next_cursor: null })
        default:
          return sendJson(res, 404, { error: 'no such path' })
      }
    })
  })
  after(async () => {
    await upstream.close()
    await other.close()
  })

  it('an HTTP source has no snapshot and says so', async () => {
    const session = await connectorAt(upstream.origin).conn.openSession()
    assert.equal(session.consistentSnapshot, false)
    assert.equal(session.snapshot, null)
  })

  it('an expired cursor is cursor_expired, never a restart', async () => {
    const { conn, calls } = connectorAt(upstream.origin)
    const result = await firstPage(conn, 'stale')
    assert.equal(result.kind, 'cursor_expired')
    assert.equal(calls.length, 1, 'no silent second request from the start')
    assert.equal(calls[0]?.outcome, 'cursor_expired')
  })

  it('cursor expiry with code_path matches only the configured code', async () => {
    const { conn } = connectorAt(upstream.origin, {
      path: '/coded',
      cursor_expired: { status: [400], code_path: 'error.code', code: 'cursor_expired' },
    })
    assert.equal((await firstPage(conn, 'stale')).kind, 'cursor_expired')
    const other400 = await firstPage(conn, 'bad')
    assert.equal(other400.kind, 'refused', 'a 400 that is not the expiry code is permanent: the same request would fail again')
    assert.equal(other400.kind === 'refused' && other400.status, 400)
  })

  it('a 410 on the first page (no position) is not a cursor expiry', async () => {
    const { conn } = connectorAt(upstream.origin, { path: '/gone-first' })
    assert.equal((await firstPage(conn)).kind, 'refused')
  })

  it('one shard that times out is unavailable, naming it, while the other shard answers', async () => {
    const log = callLog()
    const conn = createHttpConnector({
      resource: httpResource({
        // real time is the point: the answering shard has a second on two busy cores, the tarpit takes six
        timeout_ms: 1000,
        sources: [
          { name: 'shard-eu', base_url: upstream.origin },
          { name: 'shard-us', base_url: `${upstream.origin}/tarpit` },
        ],
        list: { path: '/items', pagination: { style: 'cursor' } },
      }),
      onCall: log.onCall,
    })
    const session = await conn.openSession()
    await session.readPage({ source: 'shard-eu', filter: {}, position: null, pageSize: 5 }) // warm the connection
    log.calls.length = 0
    const started = Date.now()
    const [eu, us] = await Promise.all([
      session.readPage({ source: 'shard-eu', filter: {}, position: null, pageSize: 5 }),
      session.readPage({ source: 'shard-us', filter: {}, position: null, pageSize: 5 }),
    ])
    assert.ok(Date.now() - started < 5000, 'the timeout did not wait for the slow shard')
    assert.equal(eu.kind, 'page')
    assert.equal(eu.kind === 'page' && eu.items.length, 5)
    assert.equal(us.kind, 'unavailable')
    assert.match(us.kind === 'unavailable' ? us.message : '', /source "shard-us" did not answer within 1000 ms/)
    const usCall = log.calls.find((c) => c.source === 'shard-us')
    assert.deepEqual([usCall?.status, usCall?.outcome, usCall?.endpoint], [null, 'unavailable', '/items'])
    // the slow shard's records are not mixed into the other's page
    assert.equal(log.calls.find((c) => c.source === 'shard-eu')?.outcome, 'page')
  })

  it("the caller's signal cancels the read", async () => {
    const { conn } = connectorAt(upstream.origin, { path: '/slow' })
    const session = await conn.openSession()
    const result = await session.readPage({ source: 'main', filter: {}, position: null, pageSize: 5, signal: AbortSignal.timeout(50) })
    assert.equal(result.kind, 'unavailable')
    assert.match(result.kind === 'unavailable' ? result.message : '', /cancelled/)
  })

  it('429 with Retry-After seconds is rate_limited with those seconds', async () => {
    const { conn } = connectorAt(upstream.origin, { path: '/limited', query: { ra: '17' } })
    const result = await firstPage(conn)
    assert.deepEqual(result.kind === 'rate_limited' && result.retryAfterSeconds, 17)
  })

  it('429 with an HTTP-date Retry-After counts the seconds to that date', async () => {
    const when = new Date(Date.now() + 120_000).toUTCString()
    const { conn } = connectorAt(upstream.origin, { path: '/limited', query: { ra: when } })
    const result = await firstPage(conn)
    assert.equal(result.kind, 'rate_limited')
    const seconds = result.kind === 'rate_limited' ? (result.retryAfterSeconds ?? -1) : -1
    // the date has whole seconds, and the request takes real time (up to seconds on two busy cores)
    assert.ok(seconds >= 110 && seconds <= 121, `got ${seconds}`)
  })

  it('incomplete_results: true is upstreamIncomplete with the configured reason', async () => {
    const { conn } = connectorAt(upstream.origin, {
      path: '/search',
      incomplete_flag: { path: 'incomplete_results', reason: 'TIME_BUDGET_EXCEEDED' },
    })
    const result = await firstPage(conn)
    assert.equal(result.kind, 'page')
    assert.deepEqual(result.kind === 'page' && result.upstreamIncomplete, { code: 'TIME_BUDGET_EXCEEDED' })
    const plain = await firstPage(connectorAt(upstream.origin).conn)
    assert.equal(plain.kind === 'page' && plain.upstreamIncomplete, undefined)
  })

  for (const chunked of [false, true]) {
    it(`a body over max_response_bytes is refused, never a short page (${chunked ? 'chunked' : 'content-length'})`, async () => {
      const { conn, calls } = connectorAt(upstream.origin, { path: '/huge', query: chunked ? { chunked: '1' } : {} }, { max_response_bytes: 4096 })
      const result = await firstPage(conn)
      assert.equal(result.kind, 'refused')
      assert.match(result.kind === 'refused' ? result.message : '', /cut at the byte limit/)
      assert.equal(calls[0]?.status, 200)
      // the same body under a larger limit is a page: the limit, not the content, made the difference
      const roomy = await firstPage(connectorAt(upstream.origin, { path: '/huge' }, { max_response_bytes: 8192 }).conn)
      assert.equal(roomy.kind === 'page' && roomy.items.length, 2)
    })
  }

  it('a Link header to another origin is refused and never followed', async () => {
    const { conn } = connectorAt(upstream.origin, { path: '/foreign-link', items_path: '', pagination: { style: 'link_header' } })
    const result = await firstPage(conn)
    assert.equal(result.kind, 'refused')
    assert.match(result.kind === 'refused' ? result.message : '', /outside the source's base URL/)
    assert.equal(other.seen.length, 0)
  })

  it('a stored position on another origin is refused before any request', async () => {
    const { conn, calls } = connectorAt(upstream.origin, { path: '/foreign-link', items_path: '', pagination: { style: 'link_header' } })
    await assert.rejects(firstPage(conn, `${other.origin}/items?page=2`), { code: 'invalid_cursor' })
    assert.equal(calls.length, 0)
    assert.equal(other.seen.length, 0)
  })

  it('a redirect is refused and is not followed', async () => {
    const { conn } = connectorAt(upstream.origin, { path: '/redirect' })
    const result = await firstPage(conn)
    assert.deepEqual(result.kind === 'refused' && result.status, 302)
    assert.equal(other.seen.length, 0)
  })

  it('a non-JSON body is refused', async () => {
    const result = await firstPage(connectorAt(upstream.origin, { path: '/html' }).conn)
    assert.equal(result.kind, 'refused')
    assert.match(result.kind === 'refused' ? result.message : '', /not JSON/)
  })

  it('5xx is unavailable naming the source, with the status', async () => {
    const result = await firstPage(connectorAt(upstream.origin, { path: '/broken' }).conn)
    assert.equal(result.kind, 'unavailable')
    assert.equal(result.kind === 'unavailable' && result.status, 503)
    assert.match(result.kind === 'unavailable' ? result.message : '', /source "main" answered 503/)
  })

  it('a refused connection is unavailable naming the source', async () => {
    const gone = await startUpstream((_req, res) => sendJson(res, 200, {}))
    await gone.close()
    const result = await firstPage(connectorAt(gone.origin).conn)
    assert.equal(result.kind, 'unavailable')
    assert.match(result.kind === 'unavailable' ? result.message : '', /source "main" could not be reached \(ECONNREFUSED\)/)
  })

  it('has_more true without a next cursor is refused, not the end', async () => {
    const result = await firstPage(connectorAt(upstream.origin, { path: '/has-more-without-cursor', has_more_path: 'has_more' }).conn)
    assert.equal(result.kind, 'refused')
  })

  it('an item without the id field is counted as unjudged, naming the id field: never silently dropped or kept', async () => {
    const result = await firstPage(connectorAt(upstream.origin, { path: '/no-id' }).conn)
    assert.equal(result.kind, 'page')
    assert.ok(result.kind === 'page' && result.unjudged && result.unjudged.count >= 1)
    assert.ok(result.kind === 'page' && result.unjudged?.absent.includes('id'))
    assert.ok(result.kind === 'page' && result.items.every((r) => r.id !== ''))
  })

  it('filter_params go upstream; other clauses are checked locally; total only when all were delegated', async () => {
    const { conn } = connectorAt(upstream.origin, { path: '/filtered', filter_params: { status: 'status' }, total_path: 'total' })
    upstream.seen.length = 0
    const session = await conn.openSession()
    const delegated = await session.readPage({ source: 'main', filter: { status: 'past_due' }, position: null, pageSize: 50 })
    assert.equal(upstream.seen[0]?.url.searchParams.get('status'), 'past_due')
    assert.deepEqual(delegated.kind === 'page' && delegated.items.map((r) => r.id), ['r001', 'r004', 'r007', 'r010'])
    assert.equal(delegated.kind === 'page' && delegated.total, 4)

    const mixed = await session.readPage({ source: 'main', filter: { status: 'past_due', amount: { gte: 50 } }, position: null, pageSize: 50 })
    assert.deepEqual(mixed.kind === 'page' && mixed.items.map((r) => r.id), ['r007', 'r010'])
    assert.equal(mixed.kind === 'page' && mixed.total, undefined)
    assert.equal(upstream.seen[1]?.url.searchParams.has('amount'), false)
  })

  it('every call is reported with the path template, status and outcome', async () => {
    const { conn, calls } = connectorAt(upstream.origin)
    await firstPage(conn)
    assert.equal(calls.length, 1)
    const call = calls[0]!
    assert.deepEqual({ ...call, durationMs: 0 }, { source: 'main', method: 'GET', endpoint: '/items', status: 200, outcome: 'page', durationMs: 0 })
    assert.ok(call.durationMs >= 0)
  })

  it('an unknown source and a malformed position are the caller’s errors', async () => {
    const { conn } = connectorAt(upstream.origin, { pagination: { style: 'offset' } })
    await assert.rejects(firstPage(conn, null, 'nowhere'), { code: 'invalid_request' })
    await assert.rejects(firstPage(conn, '../5'), { code: 'invalid_cursor' })
  })
})

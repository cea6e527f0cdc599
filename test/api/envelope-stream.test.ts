import assert from 'node:assert/strict'
import http from 'node:http'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { serve, type ServerType } from '@hono/node-server'
import { Hono } from 'hono'
import type { AddressInfo } from 'node:net'
import { streamEnvelope } from '../../src/api/envelope-stream.js'
import { parseConfig } from '../../src/config/index.js'
import { searchResource } from '../../src/resources/index.js'
import { startGatewayOn, type GatewayFixture } from '../support/gateway-fixture.js'
import { createTempDir, type TempDir } from '../support/stores.js'
import { delay, sendJson, startUpstream, type TestUpstream } from '../connectors/http/upstream-server.js'

// The HTTP API answers a search as it is read (src/api/envelope-stream.ts), on an upstream unlike the demo (an
// HTTP API with cursor paging, records of ~5 KB): the same envelope as the library's, the walk's end after its
// items, errors before the first item as their own answers, a client that stops reading holding the walk, a
// client that leaves ending it, and a fault after the first item cutting the connection.

const NOTE = 'n'.repeat(5000)
const TOTAL = 6000
/** record i of the big collection */
const record = (i: number) => ({ id: `r${String(i).padStart(5, '0')}`, status: i % 3 === 0 ? 'past_due' : 'active', note: NOTE, version: 1 })

/** `path` answers pages of the big collection; the cursor is the next index. `failAt`: that index answers 500. */
function page(res: http.ServerResponse, url: URL, total: number, failAt?: number) {
  const from = Number(url.searchParams.get('cursor') ?? 0)
  const limit = Number(url.searchParams.get('limit') ?? 100)
  if (failAt !== undefined && from >= failAt) return sendJson(res, 500, { error: 'the database went away' })
  const items = Array.from({ length: Math.max(0, Math.min(limit, total - from)) }, (_, k) => record(from + k))
  sendJson(res, 200, { items, next_cursor: from + limit < total ? String(from + limit) : null })
}

function resource(origin: string, path: string) {
  return {
    environment: { name: 'stream-test' },
    connector: {
      kind: 'http',
      sources: [{ name: 'main', base_url: origin }],
      list: { path, page_size_param: 'limit', pagination: { style: 'cursor' } },
      get: { path: `${path}/{id}` },
      version: { from: 'field', field: 'version' },
      timeout_ms: 5000,
    },
    fields: { id: 'string', status: 'string', note: 'string', version: 'integer' },
    review_fields: ['id', 'status', 'note'],
  }
}

/** Waits until `count()` stays the same for half a second (at most 20 s), and returns it. */
async function settled(count: () => number): Promise<number> {
  const deadline = Date.now() + 20_000
  let last = count()
  for (;;) {
    await delay(500)
    const now = count()
    if (now === last || Date.now() > deadline) return now
    last = now
  }
}

describe('a search answered as it is read (HTTP API, an HTTP upstream)', () => {
  let upstream: TestUpstream
  let dir: TempDir
  let gw: Omit<GatewayFixture, 'dir' | 'upstreamUrl' | 'storeUrl'>
  const unhandled: unknown[] = []
  const onUnhandled = (reason: unknown) => unhandled.push(reason)

  before(async () => {
    process.on('unhandledRejection', onUnhandled)
    upstream = await startUpstream(async (req, res) => {
      if (req.url.pathname === '/big') return page(res, req.url, TOTAL)
      if (req.url.pathname === '/small') return page(res, req.url, 250)
      if (req.url.pathname === '/flaky') return page(res, req.url, 1000, 200)
      if (req.url.pathname === '/empty') return sendJson(res, 200, { items: [], next_cursor: null })
      if (req.url.pathname === '/slow') {
        await delay(50)
        return page(res, req.url, TOTAL)
      }
      sendJson(res, 404, { error: 'no such list' })
    })
    dir = await createTempDir('warrant-stream-')
    const config = parseConfig({
      store: `sqlite:${join(dir.path, 'warrant.db')}`,
      resources: Object.fromEntries(['big', 'small', 'flaky', 'empty', 'slow'].map((name) => [name, resource(upstream.origin, `/${name}`)])),
    })
    gw = await startGatewayOn(config, { resources: ['big', 'small', 'flaky', 'empty', 'slow'] })
  })
  after(async () => {
    await gw.close()
    await upstream.close()
    await dir.drop()
    process.off('unhandledRejection', onUnhandled)
    assert.deepEqual(unhandled, [], 'no unhandled rejection')
  })

  const pagesOf = (path: string) => upstream.seen.filter((r) => r.url.pathname === path).length
  const search = (name: string, body: unknown) =>
    fetch(`${gw.base}/v1/resources/${name}/search`, { method: 'POST', headers: { authorization: `Bearer ${gw.tokens.agent}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })

  it('sends the same envelope as the library, its items first and its end after them, without holding it whole', async () => {
    const request = { filter: {}, page_size: 100, budget: { max_items: 10_000 } }
    const response = await search('big', request)
    assert.equal(response.status, 200)
    assert.equal(response.headers.get('content-type'), 'application/json')
    assert.equal(response.headers.get('content-length'), null, 'streamed, not buffered whole')
    const text = await response.text()
    assert.ok(text.startsWith('{"items":['), text.slice(0, 40))
    const streamed = JSON.parse(text)
    const library = await searchResource(gw.gateway.catalogue.get('big'), request, { cursorCodec: gw.gateway.cursorCodec })
    assert.equal(streamed.items.length, TOTAL)
    assert.deepEqual(streamed.items, library.items)
    const { items: _a, ...streamedEnd } = streamed
    const { items: _b, ...libraryEnd } = library
    assert.deepEqual(streamedEnd, JSON.parse(JSON.stringify(libraryEnd)))
    assert.equal(streamed.complete, true)
    assert.equal(streamed.status, 'complete')
  })

  it('a walk stopped by its budget: the items read, not complete, and a cursor that continues it', async () => {
    const first = await (await search('small', { filter: {}, page_size: 100, budget: { max_items: 150 } })).json()
    // the upstream pages by its own cursors, which may hide a page number: a page is never trimmed to the budget,
    // so the walk stops before the page that would pass it (fewer than max_items, never more)
    assert.equal(first.items.length, 100)
    assert.equal(first.complete, false)
    assert.ok(first.incomplete_reasons.some((r: { code: string }) => r.code === 'CLIENT_LIMIT_REACHED'))
    const rest = await (await search('small', { filter: {}, page_size: 100, cursor: first.continuation.cursor })).json()
    assert.equal(rest.complete, true)
    assert.deepEqual([...first.items, ...rest.items].map((i: { id: string }) => i.id), Array.from({ length: 250 }, (_, i) => record(i).id))
  })

  it('an upstream that fails after two pages: 200, those pages, not complete, and why', async () => {
    const response = await search('flaky', { filter: {}, page_size: 100 })
    assert.equal(response.status, 200)
    const body = await response.json()
    assert.equal(body.items.length, 200)
    assert.equal(body.complete, false)
    assert.equal(body.status, 'partial')
    assert.ok(body.incomplete_reasons.length > 0, JSON.stringify(body.incomplete_reasons))
  })

  it('refused before any item: the error answers with its own status, as JSON', async () => {
    const badCursor = await search('big', { filter: {}, cursor: 'not-a-cursor' })
    assert.equal(badCursor.status, 400)
    assert.ok(badCursor.headers.get('content-length'))
    assert.equal((await badCursor.json()).error.code, 'invalid_cursor')
    const badField = await search('big', { filter: { nope: 'x' } })
    assert.equal(badField.status, 400)
    assert.equal((await badField.json()).error.code, 'invalid_request')
  })

  it('an answer without items is plain JSON: complete, and empty only because it is complete', async () => {
    const response = await search('empty', { filter: {} })
    assert.equal(response.status, 200)
    assert.ok(response.headers.get('content-length'))
    const body = await response.json()
    assert.deepEqual(body.items, [])
    assert.equal(body.complete, true)
  })

  it('a client that stops reading holds the walk; one that disconnects ends it; the gateway goes on answering', async () => {
    const pages = TOTAL / 100
    const before = pagesOf('/slow')
    const url = new URL(`${gw.base}/v1/resources/slow/search`)
    const body = JSON.stringify({ filter: {}, page_size: 100, budget: { max_items: 10_000 } })
    const request = http.request(url, { method: 'POST', headers: { authorization: `Bearer ${gw.tokens.agent}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } })
    const response = await new Promise<http.IncomingMessage>((resolve, reject) => {
      request.on('response', resolve)
      request.on('error', reject)
      request.end(body)
    })
    assert.equal(response.statusCode, 200)
    response.pause() // reads nothing more: the socket's buffers fill, then the gateway's queue
    const held = await settled(() => pagesOf('/slow') - before)
    assert.ok(held >= 1 && held < pages, `the walk read ${held} of ${pages} pages for a client that reads nothing`)
    request.on('error', () => undefined)
    request.destroy()
    const atEnd = await settled(() => pagesOf('/slow') - before)
    assert.ok(atEnd < pages, `the walk read ${atEnd} of ${pages} pages for a client that left`)
    const health = await fetch(`${gw.base}/health`)
    assert.equal(health.status, 200)
    // the request is in the audit trail as a client that left, with the items it was sent (not the whole answer)
    await gw.gateway.audit.flush()
    const rows = (await gw.gateway.audit.query({ level: 'run', limit: 1000 })).events.filter((r) => r.action === 'POST /v1/resources/:resource/search')
    const row = rows.map((r) => r.summary as Record<string, any>).find((s) => s.path === '/v1/resources/slow/search')
    assert.equal(row?.outcome, 'client_closed', JSON.stringify(row))
    assert.ok(row.answer.items > 0 && row.answer.items < TOTAL, JSON.stringify(row.answer))
  })
})

describe('streamEnvelope on its own (a hono app on a real server)', () => {
  let server: ServerType
  let base = ''
  const faults: unknown[] = []
  const endless = { ended: false }
  const stubborn = { pages: 0, ended: false }
  const unhandled: unknown[] = []
  const onUnhandled = (reason: unknown) => unhandled.push(reason)
  before(async () => {
    process.on('unhandledRejection', onUnhandled)
    const app = new Hono()
    app.onError((error, c) => c.json({ error: { message: error.message } }, 418))
    const end = { status: 'complete', complete: true, truncated: false, incomplete_reasons: [], continuation: null, warnings: [] } as never
    app.get('/after-first', (c) =>
      streamEnvelope(
        c as never,
        async (onPage) => {
          await onPage([{ id: 'a' }])
          await delay(20)
          throw new Error('the gateway broke mid-walk')
        },
        (error) => faults.push(error),
      ),
    )
    app.get('/before-first', (c) =>
      streamEnvelope(
        c as never,
        async () => {
          throw new Error('refused at once')
        },
        (error) => faults.push(error),
      ),
    )
    app.get('/whole', (c) =>
      streamEnvelope(
        c as never,
        async (onPage) => {
          await onPage([{ id: 'a' }, { id: 'b' }])
          await onPage([])
          await onPage([{ id: 'c', n: 'é"\\' }])
          return end
        },
        (error) => faults.push(error),
      ),
    )
    app.get('/endless', (c) =>
      streamEnvelope(
        c as never,
        async (onPage, signal) => {
          const item = { id: 'x', note: NOTE }
          try {
            while (!signal.aborted) await onPage(Array.from({ length: 100 }, () => item))
            throw signal.reason
          } finally {
            endless.ended = true
          }
        },
        (error) => faults.push(error),
      ),
    )
    // a walk that does not heed its signal: it goes on handing pages after its client left, then ends normally
    app.get('/stubborn', (c) =>
      streamEnvelope(
        c as never,
        async (onPage) => {
          const item = { id: 'x', note: NOTE }
          for (; stubborn.pages < 400; stubborn.pages++) {
            await onPage(Array.from({ length: 100 }, () => item))
            await delay(1)
          }
          stubborn.ended = true
          return end
        },
        (error) => faults.push(error),
      ),
    )
    server = await new Promise<ServerType>((resolve) => {
      const s = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s))
    })
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  after(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()))
    process.off('unhandledRejection', onUnhandled)
    assert.deepEqual(unhandled, [], 'no unhandled rejection')
  })

  it('a fault after the first item cuts the connection: the body cannot be read as a shorter answer', async () => {
    const response = await fetch(`${base}/after-first`)
    assert.equal(response.status, 200)
    await assert.rejects(response.text())
    assert.equal(faults.length, 1)
    assert.match(String(faults[0]), /broke mid-walk/)
  })

  it('a fault before any item is that error, through the app’s error handling', async () => {
    const response = await fetch(`${base}/before-first`)
    assert.equal(response.status, 418)
    assert.deepEqual(await response.json(), { error: { message: 'refused at once' } })
  })

  it('pages joined into one JSON document, the walk’s end after the items', async () => {
    const text = await (await fetch(`${base}/whole`)).text()
    assert.deepEqual(JSON.parse(text), { items: [{ id: 'a' }, { id: 'b' }, { id: 'c', n: 'é"\\' }], status: 'complete', complete: true, truncated: false, incomplete_reasons: [], continuation: null, warnings: [] })
  })

  it('a client that leaves ends the walk (its signal aborts), and that is no fault', async () => {
    const leaving = new AbortController()
    const response = await fetch(`${base}/endless`, { signal: leaving.signal })
    const reader = response.body!.getReader()
    assert.equal((await reader.read()).done, false)
    leaving.abort()
    const deadline = Date.now() + 10_000
    while (!endless.ended && Date.now() < deadline) await delay(50)
    assert.equal(endless.ended, true, 'the walk ended')
    assert.ok(!faults.some((f) => /closed the connection/.test(String(f))), 'a client leaving is not logged as a fault')
  })

  it('a walk that ends normally after its client left: nothing more is sent, nothing fails', async () => {
    const leaving = new AbortController()
    const response = await fetch(`${base}/stubborn`, { signal: leaving.signal })
    const reader = response.body!.getReader()
    assert.equal((await reader.read()).done, false)
    leaving.abort()
    const deadline = Date.now() + 20_000
    while (!stubborn.ended && Date.now() < deadline) await delay(50)
    assert.equal(stubborn.ended, true)
    await delay(100)
    assert.deepEqual(unhandled, [])
    assert.equal(faults.filter((f) => !/broke mid-walk/.test(String(f))).length, 0)
  })
})

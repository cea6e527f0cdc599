import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createHttpConnector } from '../../../src/connectors/http/index.js'
import type { Connector, WriteOutcome } from '../../../src/connectors/connector.js'
import { callLog, httpResource } from './fixtures.js'
import { delay, sendJson, startUpstream, type TestUpstream } from './upstream-server.js'

const ACTIONS = {
  pause: { set: { status: 'paused' }, write: { method: 'PATCH', path: '/items/{id}', body: { status: '{{set.status}}' } } },
}

describe('http conditional write', () => {
  let upstream: TestUpstream
  before(async () => {
    upstream = await startUpstream(async (req, res) => {
      const m = /^\/(a|b)\/items\/([^/]+)$/.exec(req.url.pathname)
      if (!m) return sendJson(res, 404, { error: 'no route' })
      const [, shard, id] = m
      const record = { id, status: 'paused', version: 2 }
      if (id === 'onb') return shard === 'b' ? sendJson(res, 200, record, { etag: '"e2"' }) : sendJson(res, 404, { error: 'not here' })
      switch (id) {
        case 'ok':
          return sendJson(res, 200, record, { etag: '"e2"' })
        case 'nocontent':
          res.writeHead(204)
          return res.end()
        case 'accepted':
          res.writeHead(202)
          return res.end()
        case 'acceptedjob':
          return sendJson(res, 202, { id, status: 'paused', version: 2, job: 'j1' })
        case 'stale':
          return sendJson(res, 412, { error: 'version mismatch' })
        case 'authz':
          return sendJson(res, 401, { error: 'unauthenticated' })
        case 'forbidden':
          return sendJson(res, 403, { error: 'forbidden' })
        case 'invalid':
          return sendJson(res, 422, { error: { field: 'status', message: 'not allowed' } })
        case 'other400':
          return sendJson(res, 400, { error: 'bad' })
        case 'boom':
          return sendJson(res, 500, { error: 'internal' })
        case 'conflict':
          return sendJson(res, 409, { error: 'state changed' })
        case 'limited':
          return sendJson(res, 429, { error: 'slow down' }, { 'retry-after': '5' })
        case 'badjson':
          res.writeHead(200, { 'content-type': 'application/json' })
          return res.end('{"id": "badjson", ')
        case 'moved':
          res.writeHead(307, { location: '/a/items/ok' })
          return res.end()
        case 'slow':
          await delay(1000)
          return sendJson(res, 200, record)
        default:
          return sendJson(res, 404, { error: 'not found' })
      }
    })
  })
  after(() => upstream.close())

  function connector(version: Record<string, unknown> = { from: 'field', field: 'version' }, timeout_ms = 2000) {
    const log = callLog()
    const conn = createHttpConnector({
      resource: httpResource(
        {
          timeout_ms,
          sources: [
            { name: 'a', base_url: `${upstream.origin}/a` },
            { name: 'b', base_url: `${upstream.origin}/b` },
          ],
          version,
        },
        { actions: ACTIONS },
      ),
      onCall: log.onCall,
    })
    return { conn, calls: log.calls }
  }

  const write = (conn: Connector, id: string, ifMatch = true): Promise<WriteOutcome> =>
    conn.write({
      id,
      expectedVersion: '"e1"',
      set: { status: 'paused' },
      precondition: {},
      http: { method: 'PATCH', path: `/items/${id}`, body: { status: 'paused' }, ifMatch },
    })

  it('2xx is written, with the record from the body, and sends If-Match and the JSON body', async () => {
    upstream.seen.length = 0
    const { conn, calls } = connector()
    const outcome = await write(conn, 'ok')
    assert.equal(outcome.kind, 'written')
    assert.deepEqual(outcome.kind === 'written' && outcome.record, { id: 'ok', version: '2', fields: { id: 'ok', status: 'paused', version: 2 } })
    const sent = upstream.seen[0]!
    assert.equal(sent.method, 'PATCH')
    assert.equal(sent.headers['if-match'], '"e1"')
    assert.equal(sent.headers['content-type'], 'application/json')
    assert.deepEqual(JSON.parse(sent.body), { status: 'paused' })
    assert.deepEqual(calls, [{ source: 'a', method: 'PATCH', endpoint: '/items/{id}', targetId: 'ok', status: 200, outcome: 'written', durationMs: calls[0]!.durationMs }])
  })

  it('with version from etag, the written record carries the new ETag', async () => {
    const outcome = await write(connector({ from: 'etag' }).conn, 'ok')
    assert.equal(outcome.kind === 'written' && outcome.record?.version, '"e2"')
  })

  it('a 412 to a weak ETag says so: a server comparing If-Match strongly refuses it whatever the record holds', async () => {
    upstream.seen.length = 0
    const { conn } = connector({ from: 'etag' })
    const request = (id: string, expectedVersion: string) => ({ id, expectedVersion, set: { status: 'paused' }, precondition: {}, http: { method: 'PATCH', path: `/items/${id}`, body: { status: 'paused' }, ifMatch: true } })
    const weak = await conn.write(request('stale', 'W/"e1"'))
    assert.equal(weak.kind === 'conflict' && weak.reason, 'version_changed')
    assert.match(weak.kind === 'conflict' ? weak.message : '', /the version sent is a weak ETag .* if every target is refused so, have the upstream send strong ETags/)
    const strong = await conn.write(request('stale', '"e1"'))
    assert.doesNotMatch(strong.kind === 'conflict' ? strong.message : '', /weak/)
    // a lenient upstream that compares the tag as text is written to, the tag sent as it was read
    upstream.seen.length = 0
    assert.equal((await conn.write(request('ok', 'W/"e1"'))).kind, 'written')
    assert.equal(upstream.seen[0]?.headers['if-match'], 'W/"e1"')
  })

  it('204 is written without a record', async () => {
    assert.deepEqual(await write(connector().conn, 'nocontent'), { kind: 'written', status: 204, record: null })
  })

  it('202 Accepted is unknown and says so: the upstream applies the write later, its answer holds no effect yet', async () => {
    for (const id of ['accepted', 'acceptedjob']) {
      const { conn, calls } = connector()
      const outcome = await write(conn, id)
      assert.deepEqual([outcome.kind, outcome.kind === 'unknown' && outcome.accepted, outcome.kind === 'unknown' && outcome.status], ['unknown', true, 202], id)
      assert.match(outcome.kind === 'unknown' ? outcome.message : '', /202 Accepted/)
      // a write that may land: the call log's changed-records view must count it (WRITE_UNKNOWN_OUTCOMES)
      assert.deepEqual(calls.map((c) => [c.status, c.outcome]), [[202, 'unknown']])
    }
  })

  it('without ifMatch no If-Match header is sent', async () => {
    upstream.seen.length = 0
    await write(connector().conn, 'ok', false)
    assert.equal(upstream.seen[0]?.headers['if-match'], undefined)
  })

  const cases: [string, Partial<Record<string, unknown>>][] = [
    ['stale', { kind: 'conflict', reason: 'version_changed', status: 412 }],
    ['conflict', { kind: 'conflict', reason: 'precondition_failed', status: 409 }],
    ['authz', { kind: 'unauthorized', status: 401 }],
    ['forbidden', { kind: 'unauthorized', status: 403 }],
    ['invalid', { kind: 'rejected', status: 422 }],
    ['other400', { kind: 'rejected', status: 400 }],
    ['limited', { kind: 'rate_limited', status: 429, retryAfterSeconds: 5 }],
    ['boom', { kind: 'unknown', status: 500 }],
    ['badjson', { kind: 'unknown', status: 200 }],
    ['moved', { kind: 'unknown', status: 307 }],
  ]
  for (const [id, expected] of cases) {
    it(`${id} maps to ${String(expected.kind)}${expected.reason ? ` (${String(expected.reason)})` : ''}`, async () => {
      const outcome = (await write(connector().conn, id)) as unknown as Record<string, unknown>
      for (const [k, v] of Object.entries(expected)) assert.deepEqual(outcome[k], v, `${k} of ${JSON.stringify(outcome)}`)
      assert.equal(typeof outcome.message, 'string')
    })
  }

  it('422 keeps the upstream error body for the reviewer', async () => {
    const outcome = await write(connector().conn, 'invalid')
    assert.deepEqual(outcome.kind === 'rejected' && outcome.body, { error: { field: 'status', message: 'not allowed' } })
  })

  it('a timeout is unknown: the write may have happened', async () => {
    const outcome = await write(connector(undefined, 150).conn, 'slow')
    assert.equal(outcome.kind, 'unknown')
    assert.match(outcome.kind === 'unknown' ? outcome.message : '', /did not answer within 150 ms/)
  })

  it('a 404 moves on to the next source; 404 everywhere is a missing conflict', async () => {
    const { conn, calls } = connector()
    const found = await write(conn, 'onb')
    assert.equal(found.kind, 'written')
    assert.deepEqual(calls.map((c) => [c.source, c.status, c.outcome]), [['a', 404, 'not_found'], ['b', 200, 'written']])
    const nowhere = await write(conn, 'nowhere')
    assert.deepEqual([nowhere.kind, nowhere.kind === 'conflict' && nowhere.reason], ['conflict', 'missing'])
  })

  it('a 5xx on the first source is unknown and is not retried on another', async () => {
    const { conn, calls } = connector()
    await write(conn, 'boom')
    assert.equal(calls.length, 1)
  })

  it('paths that could leave the base URL are refused before any request', async () => {
    upstream.seen.length = 0
    const { conn } = connector()
    for (const path of ['/items/../admin', '/items/%2e%2e/admin', 'items/x', '//evil.example/x', '/x/https://evil.example', '/items/a b', '/items/x#frag']) {
      await assert.rejects(
        conn.write({ id: 'x', expectedVersion: '1', set: {}, precondition: {}, http: { method: 'PATCH', path, ifMatch: true } }),
        { code: 'invalid_request' },
        path,
      )
    }
    assert.equal(upstream.seen.length, 0)
  })

  it('If-Match without a version is refused before any request', async () => {
    upstream.seen.length = 0
    const { conn } = connector()
    await assert.rejects(
      conn.write({ id: 'ok', expectedVersion: '', set: {}, precondition: {}, http: { method: 'PATCH', path: '/items/ok', ifMatch: true } }),
      { code: 'invalid_request' },
    )
    assert.equal(upstream.seen.length, 0)
  })
})

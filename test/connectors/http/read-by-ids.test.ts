import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createHttpConnector } from '../../../src/connectors/http/index.js'
import { callLog, httpResource } from './fixtures.js'
import { delay, sendJson, startUpstream, type TestUpstream } from './upstream-server.js'

describe('http readByIds', () => {
  let upstream: TestUpstream
  let inFlight = 0
  let maxInFlight = 0
  before(async () => {
    upstream = await startUpstream(async (req, res) => {
      const m = /^\/(a|b)\/items\/(.+)$/.exec(req.url.pathname)
      if (!m) return sendJson(res, 404, {})
      const [, shard, raw] = m
      const id = decodeURIComponent(raw!)
      const record = (v: number) => ({ id, status: 'active', amount: 1, version: v })
      if (id.startsWith('c') && shard === 'a') {
        inFlight++
        maxInFlight = Math.max(maxInFlight, inFlight)
        await delay(25)
        inFlight--
        return sendJson(res, 200, record(1), { etag: `"${id}"` })
      }
      if (shard === 'a') {
        if (id === 'r1') return sendJson(res, 200, record(3), { etag: '"a-r1"' })
        if (id === 'flaky' || id === 'flakyb') return sendJson(res, 500, { error: 'down' })
        if (id === 'mismatch') return sendJson(res, 200, { ...record(1), id: 'someone-else' })
        if (id === 'gone') return sendJson(res, 410, {})
        return sendJson(res, 404, {})
      }
      if (id === 'r2' || id === 'flakyb') return sendJson(res, 200, record(7), { etag: '"b-r2"' })
      return sendJson(res, 404, {})
    })
  })
  after(() => upstream.close())

  function connector(version: Record<string, unknown> = { from: 'etag' }, extra: Record<string, unknown> = {}) {
    const log = callLog()
    const conn = createHttpConnector({
      resource: httpResource({
        sources: [
          { name: 'a', base_url: `${upstream.origin}/a` },
          { name: 'b', base_url: `${upstream.origin}/b` },
        ],
        version,
        ...extra,
      }),
      onCall: log.onCall,
    })
    return { conn, calls: log.calls }
  }

  it('tries the sources in order; the version is the ETag header', async () => {
    const { conn, calls } = connector()
    const result = await conn.readByIds(['r1', 'r2', 'nowhere'])
    assert.deepEqual(result.records.get('r1'), { id: 'r1', version: '"a-r1"', fields: { id: 'r1', status: 'active', amount: 1, version: 3 } })
    assert.equal(result.records.get('r2')?.version, '"b-r2"')
    assert.deepEqual(result.missing, ['nowhere'])
    assert.deepEqual(result.failed, [])
    const r2Calls = calls.filter((c) => c.targetId === 'r2').map((c) => [c.source, c.status, c.outcome, c.endpoint])
    assert.deepEqual(r2Calls, [['a', 404, 'not_found', '/items/{id}'], ['b', 200, 'found', '/items/{id}']])
  })

  it('the version can come from a field', async () => {
    const result = await connector({ from: 'field', field: 'version' }).conn.readByIds(['r2'])
    assert.equal(result.records.get('r2')?.version, '7')
  })

  it('an error on one source fails the id, even where another source has it (the failed one may hold it too)', async () => {
    const result = await connector().conn.readByIds(['flaky', 'flakyb'])
    assert.deepEqual([...result.records.keys()], [])
    assert.deepEqual(result.failed.map((f) => [f.id, f.status]), [['flaky', 500], ['flakyb', 500]])
    assert.match(result.failed[0]?.message ?? '', /source "a" answered 500/)
    assert.match(result.failed[1]?.message ?? '', /found on source "b", but source "a" could not be read for it \(source "a" answered 500/)
    assert.deepEqual(result.missing, [])
  })

  it('410 is missing; a record answering with another id is a failure', async () => {
    const result = await connector().conn.readByIds(['gone', 'mismatch'])
    assert.deepEqual(result.missing, ['gone'])
    assert.deepEqual(result.failed.map((f) => f.id), ['mismatch'])
  })

  it('ids are single encoded path segments: they cannot climb or change host', async () => {
    upstream.seen.length = 0
    const result = await connector().conn.readByIds(['../admin', '//evil.example/x', 'a?b#c', '%2e%2e'])
    assert.deepEqual(
      upstream.seen.filter((r) => r.rawUrl.startsWith('/a/')).map((r) => r.rawUrl),
      ['/a/items/..%2Fadmin', '/a/items/%2F%2Fevil.example%2Fx', '/a/items/a%3Fb%23c', '/a/items/%252e%252e'],
    )
    assert.equal(result.missing.length, 4)
  })

  it('a dot-segment id is failed without any request', async () => {
    upstream.seen.length = 0
    const result = await connector().conn.readByIds(['..', '.'])
    assert.deepEqual(result.failed.map((f) => f.id), ['..', '.'])
    assert.equal(upstream.seen.length, 0)
  })

  it('reads at most 8 ids at once, and each id once per source', async () => {
    maxInFlight = 0
    upstream.seen.length = 0
    const ids = Array.from({ length: 30 }, (_, i) => `c${i}`)
    const result = await connector().conn.readByIds([...ids, ...ids])
    assert.equal(result.records.size, 30)
    assert.equal(upstream.seen.length, 60)
    assert.ok(maxInFlight <= 8 && maxInFlight > 1, `max in flight ${maxInFlight}`)
  })

  it('read_concurrency sets how many at once', async () => {
    for (const limit of [1, 16]) {
      maxInFlight = 0
      const ids = Array.from({ length: 40 }, (_, i) => `c${i}`)
      const result = await connector({ from: 'etag' }, { read_concurrency: limit }).conn.readByIds(ids)
      assert.equal(result.records.size, 40)
      assert.ok(maxInFlight <= limit && (limit === 1 || maxInFlight > 8), `read_concurrency ${limit}: max in flight ${maxInFlight}`)
    }
  })
})

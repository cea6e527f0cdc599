import assert from 'node:assert/strict'
import type { ServerResponse } from 'node:http'
import { after, before, describe, test } from 'node:test'
import { sendJson, startUpstream, type SeenRequest, type TestUpstream } from '../connectors/http/upstream-server.js'
import { startDemoGateway, type GatewayFixture } from '../support/gateway-fixture.js'

/**
 * A read by id on an http resource of two sources ("north", "south" on two servers), unlike the demo: the id is
 * `ref`, the version `rev`, a list is `?pg=N` pages under `data.rows`, a record by id sits under `data`. A record's
 * address is (source, id). Was: `GET …/records/{id}` could not name a source (`?source=` was refused as an unknown
 * parameter), so an id both sources hold could not be read at all, and that ambiguity (the caller's to resolve) was
 * answered 502 `upstream_unavailable` as though an upstream were down. The answer never said which source the
 * record came from.
 */
type Entry = { ref: string; state: string; owner: string; rev: number }

function registry(name: string, entries: Map<string, Entry>, faults: Record<string, (res: ServerResponse) => unknown> = {}) {
  return (req: SeenRequest, res: ServerResponse) => {
    if (req.url.pathname === '/v2/entries') {
      const pg = Number(req.url.searchParams.get('pg') ?? 1)
      const rows = [...entries.values()].slice((pg - 1) * 2, pg * 2)
      return sendJson(res, 200, { data: { rows, pages: Math.ceil(entries.size / 2) } })
    }
    const one = /^\/v2\/entries\/([^/]+)$/.exec(req.url.pathname)
    const ref = one ? decodeURIComponent(one[1]!) : ''
    const fault = faults[ref]
    if (fault) return fault(res)
    const entry = entries.get(ref)
    if (!entry) return sendJson(res, 404, { error: `${name}: no entry` })
    return sendJson(res, 200, { data: entry })
  }
}

function entriesResource(north: string, south: string, edit: (r: Record<string, any>) => void = () => {}): Record<string, unknown> {
  const resource: Record<string, any> = {
    description: 'Entries of a two-region registry (test upstream)',
    environment: { name: 'registry-test', host: north },
    id_field: 'ref',
    connector: {
      kind: 'http',
      timeout_ms: 400,
      sources: [
        { name: 'north', base_url: `${north}/v2` },
        { name: 'south', base_url: `${south}/v2` },
      ],
      list: { path: '/entries', items_path: 'data.rows', pagination: { style: 'page', param: 'pg' } },
      get: { path: '/entries/{id}', record_path: 'data' },
      version: { from: 'field', field: 'rev' },
    },
    fields: { ref: 'string', state: 'string', owner: 'string', rev: 'integer' },
    review_fields: ['ref', 'state', 'owner'],
    approval: {},
    actions: {},
  }
  edit(resource)
  return resource
}

describe('a read by id on an http resource of several sources', () => {
  let north: TestUpstream
  let south: TestUpstream
  let fx: GatewayFixture
  let get: (path: string) => Promise<{ status: number; body: any }>
  const northEntries = new Map<string, Entry>([
    ['both-1', { ref: 'both-1', state: 'open', owner: 'nora', rev: 3 }],
    ['n-1', { ref: 'n-1', state: 'open', owner: 'nils', rev: 1 }],
    ['n-down', { ref: 'n-down', state: 'open', owner: 'nils', rev: 1 }],
    ['n-busy', { ref: 'n-busy', state: 'open', owner: 'nils', rev: 1 }],
    ['n-slow', { ref: 'n-slow', state: 'open', owner: 'nils', rev: 1 }],
    ['n-garbled', { ref: 'n-garbled', state: 'open', owner: 'nils', rev: 1 }],
  ])
  const southEntries = new Map<string, Entry>([
    ['both-1', { ref: 'both-1', state: 'closed', owner: 'sam', rev: 9 }],
    ['s-1', { ref: 's-1', state: 'open', owner: 'sue', rev: 2 }],
  ])
  before(async () => {
    north = await startUpstream(registry('north', northEntries))
    south = await startUpstream(
      registry('south', southEntries, {
        'n-down': (res) => sendJson(res, 503, { error: 'shard down' }),
        'gone-down': (res) => sendJson(res, 500, { error: 'shard down' }),
        'n-busy': (res) => sendJson(res, 429, { error: 'slow down' }, { 'retry-after': '11' }),
        'n-slow': () => new Promise<void>((resolve) => setTimeout(resolve, 1500)),
        'n-garbled': (res) => {
          res.writeHead(200, { 'content-type': 'application/json' })
          res.end('{"data": {"ref": "n-garbled", ')
        },
      }),
    )
    fx = await startDemoGateway({ store: 'sqlite', count: 5, edit: (c) => void (c.resources.entries = entriesResource(north.origin, south.origin)) })
    const token = (await fx.gateway.principals.issue({ name: 'entries-agent', role: 'agent', scopes: { resources: ['entries'], actions: '*' } })).token
    get = async (path) => {
      const res = await fetch(`${fx.base}${path}`, { headers: { authorization: `Bearer ${token}` } })
      return { status: res.status, body: await res.json() }
    }
  })
  after(async () => {
    await fx?.close()
    await north?.close()
    await south?.close()
  })

  test('an id one source holds is answered with that source named', async () => {
    for (const [id, source] of [['n-1', 'north'], ['s-1', 'south']] as const) {
      const res = await get(`/v1/resources/entries/records/${id}`)
      assert.equal(res.status, 200, JSON.stringify(res.body))
      assert.equal(res.body.source, source)
      assert.equal(res.body.id, id)
    }
  })

  test('an id both sources hold, no source named: 409 naming both and how to name one, never one of them', async () => {
    for (const path of ['/v1/resources/entries/records/both-1', '/v1/resources/entries/records?id=both-1']) {
      const res = await get(path)
      assert.equal(res.status, 409, JSON.stringify(res.body))
      assert.equal(res.body.error.code, 'conflict')
      assert.match(res.body.error.message, /"north" and "south"/)
      assert.match(res.body.error.message, /source=/)
      assert.deepEqual(res.body.error.details.sources, ['north', 'south'])
    }
  })

  test('naming the source reads that record, each its own', async () => {
    const n = await get('/v1/resources/entries/records/both-1?source=north')
    assert.equal(n.status, 200, JSON.stringify(n.body))
    assert.deepEqual([n.body.source, n.body.record.owner, n.body.version], ['north', 'nora', '3'])
    const s = await get('/v1/resources/entries/records?id=both-1&source=south')
    assert.equal(s.status, 200, JSON.stringify(s.body))
    assert.deepEqual([s.body.source, s.body.record.owner, s.body.version], ['south', 'sam', '9'])
  })

  test('a source the config does not declare is 400 naming it and the declared ones; nothing is read', async () => {
    const before = north.seen.length + south.seen.length
    for (const path of ['/v1/resources/entries/records/n-1?source=west', '/v1/resources/entries/records?id=n-1&source=west', '/v1/resources/entries/records/n-1?source=']) {
      const res = await get(path)
      assert.equal(res.status, 400, JSON.stringify(res.body))
      assert.equal(res.body.error.code, 'invalid_request')
      assert.match(res.body.error.message, /source/)
    }
    const west = await get('/v1/resources/entries/records/n-1?source=west')
    assert.match(west.body.error.message, /"west"/)
    assert.match(west.body.error.message, /"north", "south"/)
    assert.equal(north.seen.length + south.seen.length, before, 'an undeclared source was answered by reading')
  })

  test('an id a named source does not hold is 404 on that source, even where another holds it', async () => {
    const res = await get('/v1/resources/entries/records/s-1?source=north')
    assert.equal(res.status, 404, JSON.stringify(res.body))
    assert.match(res.body.error.message, /source "north"/)
  })

  test("an id one source holds while the other's read of it fails is not found on the first: 502 naming the failure", async () => {
    for (const id of ['n-down', 'n-busy', 'n-slow', 'n-garbled']) {
      const res = await get(`/v1/resources/entries/records/${id}`)
      assert.equal(res.status, 502, `${id}: ${JSON.stringify(res.body)}`)
      assert.equal(res.body.error.code, 'upstream_unavailable')
      assert.match(res.body.error.message, /source "south" could not be read/, id)
      if (id === 'n-busy') assert.deepEqual([res.body.error.details.status, res.body.error.details.retry_after_seconds], [429, 11], 'the wait the other source asked for was dropped')
      // named, the failing source does not matter
      const named = await get(`/v1/resources/entries/records/${id}?source=north`)
      assert.equal(named.status, 200, `${id}: ${JSON.stringify(named.body)}`)
      assert.equal(named.body.source, 'north')
    }
  })

  test('a sql resource names its one source, and refuses another', async () => {
    const agent = fx.as('agent')
    const plain = await agent('GET', '/v1/resources/subscriptions/records/sub_00001')
    assert.equal(plain.status, 200, JSON.stringify(plain.body))
    assert.equal(plain.body.source, fx.gateway.catalogue.get('subscriptions').connector.sources[0])
    const named = await agent('GET', `/v1/resources/subscriptions/records/sub_00001?source=${encodeURIComponent(plain.body.source)}`)
    assert.equal(named.status, 200, JSON.stringify(named.body))
    const other = await agent('GET', '/v1/resources/subscriptions/records/sub_00001?source=north')
    assert.equal(other.status, 400, JSON.stringify(other.body))
    assert.match(other.body.error.message, /"north" is not one of subscriptions's sources/)
  })

  test('an id no source holds while one source failed is not "no record": 502, since that source may hold it', async () => {
    const res = await get('/v1/resources/entries/records/gone-down')
    assert.equal(res.status, 502, JSON.stringify(res.body))
    assert.match(res.body.error.message, /500/)
    const none = await get('/v1/resources/entries/records/nowhere')
    assert.equal(none.status, 404)
  })
})

describe('a wrong configuration of a several-source resource, read by id', () => {
  test('an id_field the records do not carry is 502 naming the problem, on every source, never 404', async () => {
    const north = await startUpstream(registry('north', new Map([['n-1', { ref: 'n-1', state: 'open', owner: 'nils', rev: 1 }]])))
    const south = await startUpstream(registry('south', new Map()))
    const fx = await startDemoGateway({
      store: 'sqlite',
      count: 5,
      edit: (c) =>
        void (c.resources.entries = entriesResource(north.origin, south.origin, (r) => {
          r.id_field = 'id'
          r.fields = { id: 'string', state: 'string', owner: 'string', rev: 'integer' }
          r.review_fields = ['id', 'state', 'owner']
        })),
    })
    try {
      const token = (await fx.gateway.principals.issue({ name: 'entries-agent', role: 'agent', scopes: { resources: ['entries'], actions: '*' } })).token
      for (const path of ['/v1/resources/entries/records/n-1', '/v1/resources/entries/records/n-1?source=north']) {
        const res = await fetch(`${fx.base}${path}`, { headers: { authorization: `Bearer ${token}` } })
        const body = (await res.json()) as any
        assert.equal(res.status, 502, JSON.stringify(body))
        assert.match(body.error.message, /"id"/)
      }
    } finally {
      await fx.close()
      await north.close()
      await south.close()
    }
  })
})

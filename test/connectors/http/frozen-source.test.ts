import assert from 'node:assert/strict'
import { after, before, beforeEach, describe, it } from 'node:test'
import { createHttpConnector } from '../../../src/connectors/http/index.js'
import { isWarrantError } from '../../../src/contract/index.js'
import { httpResource } from './fixtures.js'
import { sendJson, startUpstream, type TestUpstream } from './upstream-server.js'

type Held = Map<string, { id: string; status: string; amount: number; version: number }>

/** A real server holding `held` under `prefix`: GET and PATCH by id, and a batch read by `?ids=`. */
function shard(prefix: string, held: Held, down: ReadonlySet<string> = new Set()): Promise<TestUpstream> {
  return startUpstream((req, res) => {
    const one = new RegExp(`^${prefix}/items/([^/]+)$`).exec(req.url.pathname)
    if (one) {
      const id = decodeURIComponent(one[1]!)
      if (down.has(id)) return sendJson(res, 500, { error: 'shard failing' })
      const record = held.get(id)
      if (!record) return sendJson(res, 404, { error: 'not found' })
      if (req.method === 'PATCH') {
        if (req.headers['if-match'] !== String(record.version)) return sendJson(res, 412, { error: 'version' })
        const next = { ...record, ...(JSON.parse(req.body) as object), version: record.version + 1 }
        held.set(id, next)
        return sendJson(res, 200, next)
      }
      return sendJson(res, 200, record)
    }
    const asked = req.url.searchParams.get('ids')
    if (req.url.pathname === `${prefix}/items` && asked !== null) return sendJson(res, 200, { items: asked.split(',').flatMap((id) => held.get(id) ?? []) })
    return sendJson(res, 404, { error: 'no route' })
  })
}

/**
 * A record's address is (source, id). Two shards on two servers under unlike base paths ("north" at /n/v1, "south"
 * at /s) both number from 1: "c-1" is one record on each. A member frozen from south is read and written on south
 * alone, so north's record of the same id (or north failing) does not matter; a source no longer declared is never
 * replaced by another: its ids fail, and a write to it is refused unsent.
 */
describe('reads and writes addressed by the source a member was frozen from', () => {
  let north: TestUpstream
  let south: TestUpstream
  const northHeld: Held = new Map()
  const southHeld: Held = new Map()
  before(async () => {
    north = await shard('/n/v1', northHeld, new Set(['c-3']))
    south = await shard('/s', southHeld)
  })
  beforeEach(() => {
    northHeld.clear()
    southHeld.clear()
    northHeld.set('c-1', { id: 'c-1', status: 'active', amount: 1, version: 1 })
    southHeld.set('c-1', { id: 'c-1', status: 'past_due', amount: 900, version: 1 })
    southHeld.set('c-2', { id: 'c-2', status: 'past_due', amount: 20, version: 4 })
    southHeld.set('c-3', { id: 'c-3', status: 'past_due', amount: 30, version: 2 })
    north.seen.length = 0
    south.seen.length = 0
  })
  after(async () => {
    await north.close()
    await south.close()
  })

  function connector(get: Record<string, unknown> = { path: '/items/{id}' }) {
    return createHttpConnector({
      resource: httpResource({
        sources: [
          { name: 'north', base_url: `${north.origin}/n/v1` },
          { name: 'south', base_url: `${south.origin}/s` },
        ],
        get,
      }),
    })
  }
  const patch = (id: string, source?: string) => ({
    id,
    expectedVersion: '1',
    set: { status: 'paused' },
    precondition: {},
    http: { method: 'PATCH', path: `/items/${id}`, body: { status: 'paused' }, ifMatch: true },
    ...(source === undefined ? {} : { source }),
  })

  for (const get of [{ path: '/items/{id}' }, { path: '/items/{id}', batch: { path: '/items', ids_param: 'ids', items_path: 'items' } }])
    it(`an id with its source is read there alone: another source holding it, or failing for it, does not matter (${get.batch ? 'get.batch' : 'get.path'})`, async () => {
      const conn = connector(get)
      try {
        const sourceOf = new Map([['c-1', 'south'], ['c-2', 'south'], ['c-3', 'south']])
        const result = await conn.readByIds(['c-1', 'c-2', 'c-3'], undefined, sourceOf)
        assert.deepEqual(result.failed, [])
        assert.deepEqual([...result.records.keys()].sort(), ['c-1', 'c-2', 'c-3'])
        assert.equal(result.records.get('c-1')!.fields.amount, 900, "south's c-1, the member's, not north's")
        assert.deepEqual(north.seen.map((r) => r.rawUrl), [], 'north was asked for ids frozen from south')
        // an id frozen from north that north does not hold is missing there, though south holds that id
        const gone = await conn.readByIds(['c-2'], undefined, new Map([['c-2', 'north']]))
        assert.deepEqual([gone.missing, gone.records.size], [['c-2'], 0])
      } finally {
        await conn.close()
      }
    })

  it('a write with its source goes there alone; a 404 there is missing, never the same id on another source', async () => {
    const conn = connector()
    try {
      const written = await conn.write(patch('c-1', 'south'))
      assert.equal(written.kind, 'written')
      assert.deepEqual([northHeld.get('c-1')!.status, southHeld.get('c-1')!.status], ['active', 'paused'])
      assert.deepEqual(north.seen.map((r) => r.method), [], 'north was sent a write for a member frozen from south')

      southHeld.set('c-9', { id: 'c-9', status: 'past_due', amount: 9, version: 1 })
      const missing = await conn.write(patch('c-9', 'north'))
      assert.equal(missing.kind, 'conflict')
      assert.equal(missing.kind === 'conflict' && missing.reason, 'missing')
      assert.equal(southHeld.get('c-9')!.status, 'past_due', "south's c-9 was written for a member frozen from north")
      assert.deepEqual(south.seen.filter((r) => r.method === 'PATCH').map((r) => r.rawUrl), ['/s/items/c-1'])
    } finally {
      await conn.close()
    }
  })

  it('a source no longer declared (renamed or removed since the freeze): its ids fail naming it, a write to it is refused unsent', async () => {
    const conn = connector()
    try {
      const result = await conn.readByIds(['c-1', 'c-2'], undefined, new Map([['c-1', 'west'], ['c-2', 'south']]))
      assert.deepEqual([...result.records.keys()], ['c-2'])
      assert.deepEqual(result.failed.map((f) => f.id), ['c-1'])
      assert.match(result.failed[0]!.message, /frozen from source "west", which this resource no longer declares \(its sources: "north", "south"\)/)
      await assert.rejects(conn.write(patch('c-1', 'west')), (error: unknown) => isWarrantError(error) && error.code === 'invalid_request' && /"west".*nothing was sent/.test(error.message))
      assert.deepEqual([...north.seen, ...south.seen].filter((r) => r.url.pathname.endsWith('/c-1')).map((r) => r.rawUrl), [], 'c-1 was asked for or written on a source it was not frozen from')
      assert.deepEqual([northHeld.get('c-1')!.status, southHeld.get('c-1')!.status], ['active', 'past_due'])
    } finally {
      await conn.close()
    }
  })
})

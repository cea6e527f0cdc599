import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import BetterSqlite3 from 'better-sqlite3'
import fc from 'fast-check'
import pg from 'pg'
import { resourceSchema } from '../../src/config/index.js'
import { decide } from '../../src/contract/index.js'
import type { Connector, ReadSession } from '../../src/connectors/connector.js'
import { createHttpConnector } from '../../src/connectors/http/index.js'
import { createSqlConnector } from '../../src/connectors/sql/index.js'
import { httpResource } from '../connectors/http/fixtures.js'
import { sendJson, startUpstream, type TestUpstream } from '../connectors/http/upstream-server.js'
import { keysOf, seedCollection, type ModelCollection } from '../support/model-connector.js'
import { createTempDir, createTestPostgresDatabase } from '../support/stores.js'
import { followToEnd, walker } from './helpers.js'
import { FILTERS, assertAccountedFor, assertNoDuplicates, budgetArb, fieldsOf, mutationScheduler, mutationsArb, type Mutation, type Write } from './walk-arbitraries.js'

/**
 * The inventory invariant of search-all.property.test.ts (complete only when every item of the snapshot is
 * accounted for; never an item twice), on the real connectors instead of the model: the `sql` connector over a
 * SQLite file and a PostgreSQL database (one read transaction per session), and the `http` connector over a
 * loopback server (live reads, with cursor, keyset and offset pages). A ModelCollection mirrors the upstream's
 * data with every version, so the test knows what each walk had to return; rows are inserted, updated and
 * deleted between pages. Run counts are modest: every run is real I/O. fast-check prints the seed and path of a
 * failure; WARRANT_CONNECTOR_PROPERTY_RUNS raises the count.
 */

const NUM_RUNS = Number(process.env.WARRANT_CONNECTOR_PROPERTY_RUNS ?? 30)
// A fixed seed by default, so a landing never fails by lot; WARRANT_CONNECTOR_PROPERTY_SEED=<n> explores, or replays
// a failure. Seed 1629232926 found the case the named test below keeps: offset pages capped at one record cannot
// carry the overlap check, so the walk went on unchecked, said `complete` with `unproven`, and missed a record when
// one before it was deleted. The invariant asked too much of such a walk: it must prove no absence, and it does not.
const SEED = Number(process.env.WARRANT_CONNECTOR_PROPERTY_SEED ?? 20261130)
console.log(`connector property seed ${SEED}: replay with WARRANT_CONNECTOR_PROPERTY_SEED=${SEED}`)
const SOURCE = 'items-db'

/** The table an sql upstream holds, over its own connection (never the connector's). */
interface SqlUpstream {
  readonly url: string
  /** Replace every row by the collection's current ones. */
  reset(collection: ModelCollection): Promise<void>
  /** Replay writes made to the collection, each committed at once. */
  replay(writes: readonly Write[]): Promise<void>
  drop(): Promise<void>
}

const rowsOf = (collection: ModelCollection) => collection.rows(SOURCE).map((r) => [r.id, r.fields.n, r.fields.status, r.version] as const)

async function sqliteUpstream(): Promise<SqlUpstream> {
  const dir = await createTempDir('warrant-walk-sqlite-')
  const file = join(dir.path, 'items.db')
  const db = new BetterSqlite3(file)
  db.pragma('journal_mode = WAL')
  db.exec('create table items (id text primary key, n integer, status text, version integer not null)')
  const insert = db.prepare('insert into items (id, n, status, version) values (?, ?, ?, ?)')
  const update = db.prepare('update items set n = ?, status = ?, version = ? where id = ?')
  const remove = db.prepare('delete from items where id = ?')
  return {
    url: `sqlite:${file}`,
    reset: async (collection) =>
      db.transaction(() => {
        db.exec('delete from items')
        for (const row of rowsOf(collection)) insert.run(...row)
      })(),
    replay: async (writes) => {
      for (const w of writes) {
        if (w.op === 'insert') insert.run(w.id, w.fields.n, w.fields.status, w.version)
        else if (w.op === 'update') update.run(w.fields.n, w.fields.status, w.version, w.id)
        else remove.run(w.id)
      }
    },
    drop: async () => {
      db.close()
      await dir.drop()
    },
  }
}

async function postgresUpstream(): Promise<SqlUpstream> {
  const database = await createTestPostgresDatabase()
  const client = new pg.Client({ connectionString: database.url })
  await client.connect()
  await client.query('create table items (id text collate "C" primary key, n integer, status text, version integer not null)')
  return {
    url: database.url,
    reset: async (collection) => {
      const rows = rowsOf(collection)
      await client.query('begin')
      await client.query('delete from items')
      if (rows.length > 0)
        await client.query('insert into items (id, n, status, version) select * from unnest($1::text[], $2::int[], $3::text[], $4::int[])', [
          rows.map((r) => r[0]),
          rows.map((r) => r[1]),
          rows.map((r) => r[2]),
          rows.map((r) => r[3]),
        ])
      await client.query('commit')
    },
    replay: async (writes) => {
      for (const w of writes) {
        if (w.op === 'insert') await client.query('insert into items (id, n, status, version) values ($1, $2, $3, $4)', [w.id, w.fields.n, w.fields.status, w.version])
        else if (w.op === 'update') await client.query('update items set n = $1, status = $2, version = $3 where id = $4', [w.fields.n, w.fields.status, w.version, w.id])
        else await client.query('delete from items where id = $1', [w.id])
      }
    },
    drop: async () => {
      await client.end()
      await database.drop()
    },
  }
}

/**
 * The real connector, unchanged, with two things noted around it: the collection's transaction when each
 * session opened and closed, and, before each page is read, the writes scheduled for that read replayed on the
 * upstream (committed on its own connection, so a snapshot session must not see them).
 */
function observed(connector: Connector, collection: ModelCollection, beforeRead: (readIndex: number) => Promise<void>) {
  const sessions: { openedAt: number; closedAt: number | null }[] = []
  let reads = 0
  const wrapped: Connector = {
    ...connector,
    async openSession(): Promise<ReadSession> {
      const info = { openedAt: collection.tx, closedAt: null as number | null }
      const session = await connector.openSession()
      sessions.push(info)
      return {
        consistentSnapshot: session.consistentSnapshot,
        snapshot: session.snapshot,
        ...(session.positions ? { positions: session.positions } : {}),
        readPage: async (request) => {
          await beforeRead(reads++)
          return session.readPage(request)
        },
        close: async () => {
          await session.close()
          info.closedAt = collection.tx
        },
      }
    },
  }
  return { connector: wrapped, sessions }
}

const sqlShapeArb = fc.record({
  count: fc.integer({ min: 0, max: 60 }),
  pageSize: fc.integer({ min: 1, max: 20 }),
  filter: fc.constantFrom(...FILTERS),
})

for (const [kind, open] of [
  ['sqlite', sqliteUpstream],
  ['postgres', postgresUpstream],
] as const) {
  describe(`searchAll properties on the sql connector (${kind})`, () => {
    let upstream: SqlUpstream
    let real: Connector
    before(async () => {
      upstream = await open()
      real = createSqlConnector({
        resource: resourceSchema.parse({
          environment: { name: 'test' },
          connector: { kind: 'sql', url: upstream.url, table: 'items', source: SOURCE },
          fields: { id: 'string', n: 'integer', status: 'string', version: 'integer' },
          id_field: 'id',
          version_field: 'version',
          review_fields: ['id', 'status'],
        }),
      })
    })
    after(async () => {
      await real?.close()
      await upstream?.drop()
    })

    it('complete only when every item of the snapshot is accounted for, with rows inserted, updated and deleted between pages; never an item twice', async () => {
      let completeUnderWrites = 0
      await fc.assert(
        fc.asyncProperty(sqlShapeArb, budgetArb, mutationsArb, fc.constantFrom('walk' as const, 'page' as const), async (shape, budget, mutations, mode) => {
          const collection = seedCollection([SOURCE], shape.count, fieldsOf)
          await upstream.reset(collection)
          const schedule = mutationScheduler(collection, mutations)
          const { connector, sessions } = observed(real, collection, (readIndex) => upstream.replay(schedule(readIndex)))
          const result = await walker(connector)({ pageSize: shape.pageSize, filter: shape.filter }, budget, { mode })
          assert.equal(sessions.length, 1)
          const session = sessions[0]!
          assert.notEqual(session.closedAt, null, 'the session was closed')
          assertAccountedFor(result, collection, { snapshot: true, openedAt: session.openedAt, closedAt: session.closedAt!, filter: shape.filter }, String)
          if (result.complete && session.closedAt! > session.openedAt) completeUnderWrites++
        }),
        { numRuns: NUM_RUNS, seed: SEED },
      )
      assert.ok(completeUnderWrites > 0, 'some walk ended complete while rows were written under it')
    })

    it('following the continuations without writes yields exactly the rows matching the filter, each once', async () => {
      await fc.assert(
        fc.asyncProperty(sqlShapeArb, budgetArb, async (shape, budget) => {
          const collection = seedCollection([SOURCE], shape.count, fieldsOf)
          await upstream.reset(collection)
          const all = await followToEnd(walker(real), { pageSize: shape.pageSize, filter: shape.filter }, budget, {}, 500)
          assert.equal(all.last.complete, true, JSON.stringify(all.last.incomplete_reasons))
          const keys = keysOf(all.items)
          assertNoDuplicates(keys)
          assert.deepEqual(new Set(keys), collection.keys(collection.tx, shape.filter))
        }),
        { numRuns: Math.ceil(NUM_RUNS / 2), seed: SEED },
      )
    })
  })
}

/**
 * The loopback upstream: `/s<k>/items` lists source k of the collection in id order, as one of three
 * pagination styles, capped at `pageCap` items and shortened on schedule; before answering a list request it
 * applies the writes scheduled for that request. What it serves is the collection as it is at that moment.
 */
interface HttpWorld {
  collection: ModelCollection
  schedule: (readIndex: number) => unknown
  style: 'cursor' | 'keyset' | 'offset'
  pageCap: number | undefined
  shortPages: readonly number[] | undefined
  lazyEnd: boolean
  reads: number
}

function serveList(world: HttpWorld, source: string, query: URLSearchParams) {
  const readIndex = world.reads++
  world.schedule(readIndex)
  const rows = world.collection.rows(source).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  let n = Math.min(Number(query.get('limit') ?? 10), world.pageCap ?? Infinity)
  if (world.shortPages) n = Math.min(n, world.shortPages[readIndex % world.shortPages.length]!)
  const after = query.get(world.style === 'keyset' ? 'start_after' : 'cursor')
  const from = world.style === 'offset' ? Number(query.get('offset') ?? 0) : after === null ? 0 : rows.filter((r) => r.id <= after).length
  const taken = rows.slice(from, from + n)
  const more = from + taken.length < rows.length || (world.lazyEnd && taken.length > 0)
  const items = taken.map((r) => ({ id: r.id, ...r.fields, version: r.version }))
  if (world.style === 'cursor') return { items, next_cursor: more ? taken.at(-1)!.id : null }
  if (world.style === 'offset') return { items, has_more: more }
  return { items }
}

const httpShapeArb = fc.record({
  counts: fc.array(fc.integer({ min: 0, max: 40 }), { minLength: 1, maxLength: 3 }),
  pageSize: fc.integer({ min: 1, max: 20 }),
  style: fc.constantFrom('cursor' as const, 'keyset' as const, 'offset' as const),
  pageCap: fc.option(fc.integer({ min: 1, max: 15 }), { nil: undefined }),
  // Fewer items than asked while more remain; never an empty page, which keyset and offset pages read as the end
  // (an upstream that did that would be lying, not testing the walk).
  shortPages: fc.option(fc.array(fc.integer({ min: 1, max: 10 }), { minLength: 1, maxLength: 6 }), { nil: undefined }),
  lazyEnd: fc.boolean(),
  filter: fc.constantFrom(...FILTERS),
})

type HttpShape = typeof httpShapeArb extends fc.Arbitrary<infer T> ? T : never

describe('searchAll properties on the http connector (loopback upstream)', () => {
  let server: TestUpstream
  const world: HttpWorld = { collection: seedCollection(['s0'], 0), schedule: () => undefined, style: 'cursor', pageCap: undefined, shortPages: undefined, lazyEnd: false, reads: 0 }
  before(async () => {
    server = await startUpstream((req, res) => {
      const match = /^\/(s\d)\/items$/.exec(req.url.pathname)
      if (req.method !== 'GET' || !match || !world.collection.sources.includes(match[1]!)) return sendJson(res, 404, { error: 'no such list' })
      sendJson(res, 200, serveList(world, match[1]!, req.url.searchParams))
    })
  })
  after(async () => {
    await server?.close()
  })

  const connectorFor = (shape: { counts: readonly number[]; style: HttpWorld['style'] }): Connector =>
    createHttpConnector({
      resource: httpResource({
        // generous for two busy cores: a timeout would only make a walk incomplete, which the property allows
        timeout_ms: 10_000,
        sources: shape.counts.map((_, k) => ({ name: `s${k}`, base_url: `${server.origin}/s${k}` })),
        list: {
          path: '/items',
          page_size_param: 'limit',
          pagination: shape.style === 'cursor' ? { style: 'cursor' } : shape.style === 'keyset' ? { style: 'keyset', param: 'start_after' } : { style: 'offset' },
          ...(shape.style === 'offset' ? { has_more_path: 'has_more' } : {}),
        },
      }, { fields: { id: 'string', status: 'string', n: 'integer', version: 'integer' } }),
    })

  const setUp = (shape: HttpShape, mutations: readonly Mutation[]) => {
    world.collection = seedCollection(shape.counts.map((_, k) => `s${k}`), shape.counts, fieldsOf)
    world.schedule = mutationScheduler(world.collection, mutations)
    world.style = shape.style
    world.pageCap = shape.pageCap
    world.shortPages = shape.shortPages
    world.lazyEnd = shape.lazyEnd
    world.reads = 0
  }

  it('live reads: complete over stable or proven positions only when every record present throughout the walk is returned, and never absence proven when one was missed; every item existed at its version; never an item twice', async () => {
    let completeUnderWrites = 0
    await fc.assert(
      fc.asyncProperty(httpShapeArb, budgetArb, mutationsArb, fc.constantFrom('walk' as const, 'page' as const), async (shape, budget, mutations, mode) => {
        setUp(shape, mutations)
        const openedAt = world.collection.tx
        const result = await walker(connectorFor(shape))({ pageSize: shape.pageSize, filter: shape.filter }, budget, { mode })
        // the loopback's cursor and keyset positions are ids; its offsets shift when a record before them goes
        const stablePositions = shape.style !== 'offset'
        assertAccountedFor(result, world.collection, { snapshot: false, openedAt, closedAt: world.collection.tx, filter: shape.filter, stablePositions }, String)
        if (result.complete && world.collection.tx > openedAt) completeUnderWrites++
      }),
      { numRuns: NUM_RUNS, seed: SEED },
    )
    assert.ok(completeUnderWrites > 0, 'some walk ended complete while records were written under it')
  })

  it('offset pages capped at one record: the overlap check cannot move the walk, so it goes on unchecked; a record deleted behind it makes it miss one, and it says unproven and proves no absence', async () => {
    const shape: HttpShape = { counts: [5, 0], pageSize: 1, style: 'offset', pageCap: 1, shortPages: undefined, lazyEnd: false, filter: {} }
    setUp(shape, [{ atRead: 8, op: 'delete', source: 0, pick: 0 }])
    const result = await walker(connectorFor(shape))({ pageSize: 1, filter: {} }, { maxPages: 50, maxItems: 100 }, { mode: 'walk' })
    assert.deepEqual(keysOf(result.items), ['s0/r00000', 's0/r00001', 's0/r00002', 's0/r00003'])
    assert.equal(result.complete, true)
    assert.equal(result.scope.stability, 'unproven')
    assert.equal(decide(result, 'prove_absence').decision, 'refuse_or_request_review')
  })

  it('following the continuations without writes yields exactly the records matching the filter, each once', async () => {
    await fc.assert(
      fc.asyncProperty(httpShapeArb, budgetArb, async (shape, budget) => {
        setUp(shape, [])
        const all = await followToEnd(walker(connectorFor(shape)), { pageSize: shape.pageSize, filter: shape.filter }, budget, {}, 500)
        assert.equal(all.last.complete, true, JSON.stringify(all.last.incomplete_reasons))
        const keys = keysOf(all.items)
        assertNoDuplicates(keys)
        assert.deepEqual(new Set(keys), world.collection.keys(world.collection.tx, shape.filter))
      }),
      { numRuns: Math.ceil(NUM_RUNS / 2), seed: SEED },
    )
  })
})

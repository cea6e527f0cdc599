import assert from 'node:assert/strict'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import fc from 'fast-check'
import { resourceSchema, type ResourceConfig } from '../../../src/config/index.js'
import type { ReadSession, UpstreamCall } from '../../../src/connectors/connector.js'
import { createSqlConnector, type SqlConnector, type SqlConnectorOptions } from '../../../src/connectors/sql/index.js'
import { matchesFilter, WarrantError, type Filter } from '../../../src/contract/index.js'
import { createUpstream, SQL_KINDS, type Row, type Upstream } from './support/upstream.js'

const INJECTION = "x'; DROP TABLE things; --"
const STRINGS = ['', 'a', 'b', 'B', 'ab', 'a b', "O'Brien", INJECTION, '"quoted"', 'é', 'Z', '%', '_']
const NUMBERS = [-2.5, -1, 0, 0.1, 1, 3.75, 100]
const INTEGERS = [-3, 0, 1, 2, 7]
const TAGS = ['x', 'y', 'z', "q'uote", 'a;b']
const TIMES = ['2024-01-01T00:00:00.000Z', '2024-06-15T12:30:00.000Z', '2024-06-15T12:30:00.001Z', '2025-01-01T00:00:00.000Z']

function resourceFor(url: string): ResourceConfig {
  return resourceSchema.parse({
    environment: { name: 'test' },
    connector: { kind: 'sql', url, table: 'things', source: 'things-db' },
    fields: { id: 'string', name: 'string', n: 'number', k: 'integer', flag: 'boolean', tags: 'tags', at: 'timestamp', version: 'integer', updated_at: 'timestamp', secret: 'string' },
    id_field: 'id',
    version_field: 'version',
    review_fields: ['id', 'name'],
    denied_fields: ['secret'],
  })
}

const rowId = (i: number) => `row_${String(i).padStart(4, '0')}`

function plainRows(count: number): Row[] {
  return Array.from({ length: count }, (_, i) => ({
    id: rowId(i + 1),
    name: STRINGS[i % STRINGS.length]!,
    n: NUMBERS[i % NUMBERS.length]!,
    k: INTEGERS[i % INTEGERS.length]!,
    flag: i % 3 === 0,
    tags: i % 4 === 0 ? ['x', 'y'] : [],
    at: TIMES[i % TIMES.length]!,
    version: 1,
    updated_at: '2024-01-01T00:00:00.000Z',
    secret: `tok_${i}`,
  }))
}

const rowsArb = fc
  .array(
    fc.record({
      name: fc.option(fc.constantFrom(...STRINGS), { nil: null }),
      n: fc.option(fc.constantFrom(...NUMBERS), { nil: null }),
      k: fc.option(fc.constantFrom(...INTEGERS), { nil: null }),
      flag: fc.option(fc.boolean(), { nil: null }),
      tags: fc.option(fc.subarray(TAGS), { nil: null }),
      at: fc.option(fc.constantFrom(...TIMES), { nil: null }),
      version: fc.integer({ min: 1, max: 9 }),
    }),
    { maxLength: 60 },
  )
  .map((rows) => rows.map((r, i): Row => ({ ...r, id: rowId(i * 3 + 1), updated_at: TIMES[0]!, secret: `tok_${i}` })))

function conditionArb<T extends string | number | boolean>(values: readonly T[], ordered: boolean) {
  const v = fc.constantFrom(...values)
  const list = fc.uniqueArray(v, { minLength: 1, maxLength: 3 })
  const options = [
    v,
    v.map((eq) => ({ eq })),
    list.map((values) => ({ in: values })),
    list.map((values) => ({ not_in: values })),
    fc.boolean().map((is_null) => ({ is_null })),
  ] as fc.Arbitrary<unknown>[]
  if (ordered) {
    options.push(
      v.map((lt) => ({ lt })),
      v.map((lte) => ({ lte })),
      v.map((gt) => ({ gt })),
      v.map((gte) => ({ gte })),
      fc.tuple(v, v).map(([gte, lt]) => ({ gte, lt })),
    )
  }
  return fc.oneof(...options)
}

const CONDITIONS: Record<string, fc.Arbitrary<unknown>> = {
  id: conditionArb(['row_0001', 'row_0010', 'row_0050', 'nope'], true),
  name: conditionArb(STRINGS, true),
  n: conditionArb(NUMBERS, true),
  k: conditionArb(INTEGERS, true),
  flag: conditionArb([true, false], false),
  tags: fc.oneof(fc.constantFrom(...TAGS, 'absent').map((contains) => ({ contains })), fc.boolean().map((is_null) => ({ is_null }))),
  at: conditionArb(TIMES, true),
  version: conditionArb([1, 2, 5, 9], true),
}

/** Filters on 0 to 3 fields: few enough that most match something. */
const filterArb: fc.Arbitrary<Filter> = fc
  .subarray(Object.keys(CONDITIONS), { maxLength: 3 })
  .chain((keys) => fc.record(Object.fromEntries(keys.map((key) => [key, CONDITIONS[key]!])))) as fc.Arbitrary<Filter>

/** Walks a filter to the end in one session with the given page sizes (cycled); checks order and uniqueness. */
async function walk(session: ReadSession, filter: Filter, sizes: readonly number[] = [100], source = 'things-db') {
  const records = []
  let position: string | null = null
  for (let page = 0; ; page++) {
    const result = await session.readPage({ source, filter, position, pageSize: sizes[page % sizes.length]! })
    assert.equal(result.kind, 'page', JSON.stringify(result))
    if (result.kind !== 'page') throw new Error('unreachable')
    assert.ok(result.items.length <= sizes[page % sizes.length]!)
    records.push(...result.items)
    if (result.next === null) break
    assert.equal(result.items.length, sizes[page % sizes.length], 'a page with a next position is full')
    position = result.next
    assert.ok(page < 10_000, 'the walk ends')
  }
  const ids = records.map((r) => r.id)
  assert.deepEqual(ids, [...ids].sort(), 'id ascending')
  assert.equal(new Set(ids).size, ids.length, 'every record once')
  return records
}

function expectError(fn: () => unknown, code: string, details: Record<string, unknown>): Promise<void> {
  return assert.rejects(
    async () => fn(),
    (error: unknown) => {
      assert.ok(error instanceof WarrantError, String(error))
      assert.equal(error.code, code)
      for (const [key, value] of Object.entries(details)) assert.equal((error.details as Record<string, unknown>)[key], value, error.message)
      return true
    },
  )
}

for (const kind of SQL_KINDS) {
  describe(`sql connector on ${kind}`, () => {
    let upstream: Upstream
    let connector: SqlConnector
    let calls: UpstreamCall[] = []
    const clock = { now: new Date('2030-01-02T03:04:05.006Z') }
    const make = (extra: Partial<SqlConnectorOptions> = {}) =>
      createSqlConnector({ resource: resourceFor(upstream.url), onCall: (c) => calls.push(c), now: () => clock.now, ...extra })

    before(async () => {
      upstream = await createUpstream(kind)
      connector = make()
    })
    after(async () => {
      await connector?.close()
      await upstream?.drop()
    })

    it('declares its shape: one source, id ascending, a real snapshot', async () => {
      assert.equal(connector.kind, 'sql')
      assert.equal(connector.dialect, kind)
      assert.deepEqual(connector.sources, ['things-db'])
      assert.equal(connector.ordering, 'id ascending')
      await upstream.reset(plainRows(3))
      const session = await connector.openSession()
      try {
        assert.equal(session.consistentSnapshot, true)
        assert.match(session.snapshot ?? '', { sqlite: /^sqlite:/, postgres: /^postgres:\d+:\d+:/, mysql: /^mysql:\d{4}-\d\d-\d\dT[\d:.]+Z;connection=\d+$/ }[kind])
      } finally {
        await session.close()
      }
    })

    it('returns every declared field, normalised to its type (tags, numbers, booleans, timestamps)', async () => {
      const rows = plainRows(8)
      rows[1] = { ...rows[1]!, name: null, n: null, k: null, flag: null, tags: null, at: null }
      await upstream.reset(rows)
      const session = await connector.openSession()
      try {
        const records = await walk(session, {})
        assert.deepEqual(
          records.map((r) => r.fields),
          rows,
        )
        assert.deepEqual(
          records.map((r) => [r.id, r.version]),
          rows.map((r) => [r.id, '1']),
        )
      } finally {
        await session.close()
      }
    })

    it('compiles every operator with the semantics of matchesFilter (property over random rows and filters)', async () => {
      let matched = 0
      let filtered = 0
      await fc.assert(
        fc.asyncProperty(rowsArb, fc.array(filterArb, { minLength: 1, maxLength: 6 }), fc.integer({ min: 1, max: 15 }), async (rows, filters, pageSize) => {
          await upstream.reset(rows)
          const session = await connector.openSession()
          try {
            for (const filter of filters) {
              const records = await walk(session, filter, [pageSize])
              const expected = rows.filter((r) => matchesFilter(r as unknown as Record<string, unknown>, filter, resourceFor('sqlite:unused').fields)).map((r) => r.id)
              assert.deepEqual(records.map((r) => r.id), expected, JSON.stringify(filter))
              if (expected.length > 0) matched++
              if (expected.length > 0 && expected.length < rows.length) filtered++
            }
          } finally {
            await session.close()
          }
        }),
        { numRuns: 80 },
      )
      assert.ok(matched > 20 && filtered > 20, `the property exercised filters that select some rows and not others (${matched}, ${filtered})`)
    })

    it('walks in keyset order with random page sizes: every row once, in id order', async () => {
      const rows = plainRows(137)
      await upstream.reset(rows)
      await fc.assert(
        fc.asyncProperty(fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 6 }), async (sizes) => {
          const session = await connector.openSession()
          try {
            const records = await walk(session, {}, sizes)
            assert.deepEqual(records.map((r) => r.id), rows.map((r) => r.id))
          } finally {
            await session.close()
          }
        }),
        { numRuns: 30 },
      )
      // an exact multiple of the page size still ends with next: null on the last full page's successor
      const session = await connector.openSession()
      try {
        const first = await session.readPage({ source: 'things-db', filter: {}, position: null, pageSize: 137 })
        assert.ok(first.kind === 'page' && first.items.length === 137 && first.next === null, 'all rows in one page: no next')
        const short = await session.readPage({ source: 'things-db', filter: {}, position: null, pageSize: 136 })
        assert.ok(short.kind === 'page' && short.next !== null, 'one row left: a next position')
      } finally {
        await session.close()
      }
    })

    it('pages asked out of order in one session (an earlier position again, the first page again, another filter) each start where they say', async () => {
      const rows = plainRows(60)
      await upstream.reset(rows)
      const session = await connector.openSession()
      const ids = (page: Awaited<ReturnType<ReadSession['readPage']>>) => (page.kind === 'page' ? page.items.map((r) => r.id) : [page.kind])
      const read = (position: string | null, pageSize = 10, filter: Filter = {}) => session.readPage({ source: 'things-db', filter, position, pageSize })
      try {
        const first = await read(null)
        const second = await read(first.kind === 'page' ? first.next : null)
        assert.deepEqual(ids(second), rows.slice(10, 20).map((r) => r.id))
        // the walk's next page, then back to the second page's start (a retried page), then on from it
        const third = await read(second.kind === 'page' ? second.next : null, 5)
        assert.deepEqual(ids(third), rows.slice(20, 25).map((r) => r.id))
        const again = await read(first.kind === 'page' ? first.next : null, 7)
        assert.deepEqual(ids(again), rows.slice(10, 17).map((r) => r.id))
        assert.deepEqual(ids(await read(again.kind === 'page' ? again.next : null, 3)), rows.slice(17, 20).map((r) => r.id))
        assert.deepEqual(ids(await read(null, 4)), rows.slice(0, 4).map((r) => r.id))
        const some = rows.filter((r) => [1, 2].includes(r.k as number))
        assert.deepEqual(ids(await read(null, 4, { k: { in: [1, 2] } })), some.slice(0, 4).map((r) => r.id))
      } finally {
        await session.close()
      }
    })

    it('keeps values as parameters: quotes and semicolons find what they equal and drop nothing', async () => {
      await upstream.reset(plainRows(30))
      const session = await connector.openSession()
      try {
        const filters: Filter[] = [
          { name: INJECTION },
          { name: { in: [INJECTION, "' OR '1'='1"] } },
          { name: "' OR '1'='1" },
          { id: "row_0001' OR 1=1 --" },
          { tags: { contains: "x') OR 1=1; --" } },
          { name: { gt: "'; DELETE FROM things; --" } },
        ]
        for (const filter of filters) {
          const records = await walk(session, filter)
          const expected = plainRows(30).filter((r) => matchesFilter(r as unknown as Record<string, unknown>, filter, resourceFor('sqlite:unused').fields))
          assert.deepEqual(records.map((r) => r.id), expected.map((r) => r.id), JSON.stringify(filter))
        }
        const hits = await walk(session, { name: INJECTION })
        assert.ok(hits.length > 0 && hits.every((r) => r.fields.name === INJECTION))
      } finally {
        await session.close()
      }
      assert.equal(await upstream.count(), 30, 'the table is still there, with every row')
      const byId = await connector.readByIds(["row_0001'; DROP TABLE things; --", 'row_0001'])
      assert.deepEqual([...byId.records.keys()], ['row_0001'])
      assert.deepEqual(byId.missing, ["row_0001'; DROP TABLE things; --"])
      assert.equal(await upstream.count(), 30)
    })

    it('refuses undeclared fields and operators that do not fit the type, naming field and operator', async () => {
      await upstream.reset(plainRows(3))
      const session = await connector.openSession()
      const read = (filter: Filter) => session.readPage({ source: 'things-db', filter, position: null, pageSize: 10 })
      try {
        await expectError(() => read({ password: 'x' }), 'invalid_request', { field: 'password' })
        await expectError(() => read({ 'name; drop table things': 'x' } as Filter), 'invalid_request', { field: 'name; drop table things' })
        await expectError(() => read({ tags: { lt: 'x' } }), 'invalid_request', { field: 'tags', operator: 'lt' })
        await expectError(() => read({ tags: 'x' }), 'invalid_request', { field: 'tags', operator: 'eq' })
        await expectError(() => read({ name: { contains: 'x' } }), 'invalid_request', { field: 'name', operator: 'contains' })
        await expectError(() => read({ flag: { gt: false } }), 'invalid_request', { field: 'flag', operator: 'gt' })
        await expectError(() => read({ n: { gte: 'ten' } }), 'invalid_request', { field: 'n', operator: 'gte' })
        await expectError(() => read({ k: 1.5 }), 'invalid_request', { field: 'k', operator: 'eq' })
        await expectError(() => read({ name: { in: ['a', 3] } }), 'invalid_request', { field: 'name', operator: 'in' })
        await expectError(() => session.readPage({ source: 'things-db', filter: {}, position: 'garbage', pageSize: 10 }), 'invalid_cursor', {})
        await expectError(() => session.readPage({ source: 'other', filter: {}, position: null, pageSize: 10 }), 'invalid_request', {})
        await expectError(() => session.readPage({ source: 'things-db', filter: {}, position: null, pageSize: 0 }), 'invalid_request', {})
        // the session survives refused requests
        const ok = await read({ name: 'a' })
        assert.equal(ok.kind, 'page')
      } finally {
        await session.close()
      }
    })

    it('reads one snapshot for the whole session: later inserts, updates and deletes are not seen', async () => {
      const rows = plainRows(30)
      await upstream.reset(rows)
      const session = await connector.openSession()
      try {
        // before the first page: the snapshot was taken when the session opened
        await upstream.exec('insert into things (id, name, version, updated_at, secret) values (?, ?, 1, ?, ?)', ['row_0000', 'early', TIMES[0], 's'])
        const first = await session.readPage({ source: 'things-db', filter: {}, position: null, pageSize: 10 })
        assert.ok(first.kind === 'page')
        assert.equal(first.items[0]!.id, 'row_0001', 'a row inserted after open is not seen')
        // after the first page
        await upstream.exec('update things set name = ?, version = version + 1 where id = ?', ['changed', 'row_0025'])
        await upstream.exec('delete from things where id = ?', ['row_0020'])
        await upstream.exec('insert into things (id, name, version, updated_at, secret) values (?, ?, 1, ?, ?)', ['row_9999', 'late', TIMES[0], 's'])
        const rest = []
        let position = first.next
        while (position !== null) {
          const page = await session.readPage({ source: 'things-db', filter: {}, position, pageSize: 7 })
          assert.ok(page.kind === 'page')
          rest.push(...page.items)
          position = page.next
        }
        const seen = [...first.items, ...rest]
        assert.deepEqual(seen.map((r) => r.id), rows.map((r) => r.id))
        const r25 = seen.find((r) => r.id === 'row_0025')!
        assert.equal(r25.fields.name, rows[24]!.name)
        assert.equal(r25.version, '1')
        // filters are evaluated against the snapshot too
        const changed = await walk(session, { name: 'changed' })
        assert.deepEqual(changed, [])
      } finally {
        await session.close()
      }
      const fresh = await connector.openSession()
      try {
        const ids = (await walk(fresh, {})).map((r) => r.id)
        assert.ok(ids.includes('row_0000') && ids.includes('row_9999') && !ids.includes('row_0020'))
        assert.deepEqual((await walk(fresh, { name: 'changed' })).map((r) => [r.id, r.version]), [['row_0025', '2']])
      } finally {
        await fresh.close()
      }
    })

    it('reads by id in chunks, listing the missing ones', async () => {
      const rows = plainRows(1100)
      await upstream.reset(rows)
      calls = []
      const wanted = [...rows.map((r) => r.id), 'row_5000', 'nope', 'row_0001', '', 'row_0500']
      const result = await connector.readByIds(wanted)
      assert.equal(result.records.size, 1100)
      assert.deepEqual(result.missing, ['row_5000', 'nope', ''])
      assert.deepEqual(result.failed, [])
      assert.deepEqual(result.records.get('row_0007')?.fields, rows[6])
      // the catalogue facts are read again once older than their age (each statement a call of its own)
      const catalogue = calls.filter((c) => c.endpoint.startsWith('catalogue: '))
      assert.ok(catalogue.every((c) => c.endpoint.endsWith(' of table things') && c.outcome === 'ok'), JSON.stringify(catalogue))
      const selects = calls.filter((c) => c.method === 'SELECT' && !catalogue.includes(c))
      // 1,103 distinct ids in chunks of 500, and the last chunk's three ids without a row asked again together (an
      // engine may have matched them to a row stored otherwise: read-by-ids.ts), each statement a call
      assert.equal(selects.length, 4, '1,103 distinct ids in chunks of 500, and the ids left asked again')
      assert.ok(selects.every((c) => c.endpoint === 'table things' && c.status === null && c.outcome === 'ok' && c.source === 'things-db'))
      const empty = await connector.readByIds([])
      assert.deepEqual([empty.records.size, empty.missing, empty.failed], [0, [], []])
    })

    describe('conditional write', () => {
      const precondition: Filter = { flag: true, name: { not_in: ['blocked'] } }
      before(async () => {
        await upstream.reset(plainRows(10))
      })

      it('writes, bumps the version, sets updated_at and returns the record after', async () => {
        calls = []
        const outcome = await connector.write({ id: 'row_0001', expectedVersion: '1', set: { name: 'paused', tags: ['vip', "it's"] }, precondition })
        assert.equal(outcome.kind, 'written', JSON.stringify(outcome))
        if (outcome.kind !== 'written') return
        assert.equal(outcome.status, 200)
        assert.equal(outcome.record?.version, '2')
        assert.deepEqual(outcome.record?.fields, { ...plainRows(10)[0], name: 'paused', tags: ['vip', "it's"], version: 2, updated_at: clock.now.toISOString() })
        const stored = await connector.readByIds(['row_0001'])
        assert.deepEqual(stored.records.get('row_0001'), outcome.record)
        assert.deepEqual(calls.map((c) => [c.method, c.endpoint, c.targetId, c.outcome, c.status]), [
          ['UPDATE', 'table things', 'row_0001', 'written', null],
          ['SELECT', 'table things', 'row_0001', 'ok', null],
        ])
        assert.ok(!JSON.stringify(calls).includes('tok_') && !JSON.stringify(calls).includes('paused'), 'no values in call events')
      })

      it('a stale version is a version_changed conflict, and nothing changes', async () => {
        const outcome = await connector.write({ id: 'row_0001', expectedVersion: '1', set: { name: 'again' }, precondition })
        assert.equal(outcome.kind, 'conflict')
        assert.equal(outcome.kind === 'conflict' && outcome.reason, 'version_changed')
        const stored = (await connector.readByIds(['row_0001'])).records.get('row_0001')
        assert.equal(stored?.fields.name, 'paused')
        assert.equal(stored?.version, '2')
      })

      it('a precondition that no longer holds is a precondition_failed conflict', async () => {
        // row_0002 has flag false
        const outcome = await connector.write({ id: 'row_0002', expectedVersion: '1', set: { name: 'x' }, precondition })
        assert.equal(outcome.kind === 'conflict' && outcome.reason, 'precondition_failed', JSON.stringify(outcome))
        await upstream.exec('update things set name = ? where id = ?', ['blocked', 'row_0004'])
        const blocked = await connector.write({ id: 'row_0004', expectedVersion: '1', set: { name: 'x' }, precondition })
        assert.equal(blocked.kind === 'conflict' && blocked.reason, 'precondition_failed')
        assert.equal((await connector.readByIds(['row_0004'])).records.get('row_0004')?.fields.name, 'blocked')
      })

      it('a missing id is a missing conflict', async () => {
        const outcome = await connector.write({ id: 'row_4242', expectedVersion: '1', set: { name: 'x' }, precondition: {} })
        assert.equal(outcome.kind === 'conflict' && outcome.reason, 'missing')
        const injected = await connector.write({ id: "row_0007' OR '1'='1", expectedVersion: '1', set: { name: 'x' }, precondition: {} })
        assert.equal(injected.kind === 'conflict' && injected.reason, 'missing')
        assert.equal((await connector.readByIds(['row_0007'])).records.get('row_0007')?.version, '1')
      })

      it('a value the database refuses is rejected (422); a write of nothing declared is refused before any call', async () => {
        calls = []
        const outcome = await connector.write({ id: 'row_0007', expectedVersion: '1', set: { k: -5000 }, precondition: {} })
        assert.equal(outcome.kind, 'rejected', JSON.stringify(outcome))
        assert.equal(outcome.kind === 'rejected' && outcome.status, 422)
        assert.equal((await connector.readByIds(['row_0007'])).records.get('row_0007')?.version, '1')
        await expectError(() => connector.write({ id: 'row_0007', expectedVersion: '1', set: { password: 'x' }, precondition: {} }), 'invalid_request', { field: 'password' })
        await expectError(() => connector.write({ id: 'row_0007', expectedVersion: '1', set: { version: 9 }, precondition: {} }), 'invalid_request', { field: 'version' })
        await expectError(() => connector.write({ id: 'row_0007', expectedVersion: '1', set: { k: 'many' }, precondition: {} }), 'invalid_request', { field: 'k' })
        await expectError(() => connector.write({ id: 'row_0007', expectedVersion: '1', set: { name: 'x' }, precondition: { tags: { gt: 'a' } } }), 'invalid_request', { field: 'tags', operator: 'gt' })
        assert.deepEqual(calls.map((c) => c.outcome), ['rejected', 'ok'])
      })

      it('writes booleans and nulls, and conditions on them', async () => {
        const outcome = await connector.write({ id: 'row_0003', expectedVersion: '1', set: { flag: true, at: null }, precondition: { flag: false, at: { is_null: false } } })
        assert.equal(outcome.kind, 'written', JSON.stringify(outcome))
        assert.equal(outcome.kind === 'written' && outcome.record?.fields.flag, true)
        assert.equal(outcome.kind === 'written' && outcome.record?.fields.at, null)
      })
    })

    it('timestamp versions (microseconds on PostgreSQL) and string versions write conditionally too', async () => {
      const ts = { postgres: 'timestamptz', mysql: 'datetime(6)', sqlite: 'text' }[kind]
      const text = kind === 'mysql' ? 'varchar(64)' : 'text'
      await upstream.exec(`create table stamped (id ${text} primary key, title ${text} not null, rev ${ts} not null)`)
      await upstream.exec(`create table tagged (id ${text} primary key, title ${text} not null, rev ${text} not null)`)
      await upstream.exec('insert into stamped values (?, ?, ?)', ['s1', 'one', kind === 'sqlite' ? '2024-01-01T00:00:00.123Z' : '2024-01-01T00:00:00.123456Z'])
      await upstream.exec('insert into tagged values (?, ?, ?)', ['t1', 'one', 'rev-abc'])
      const resourceOf = (table: string, rev: 'timestamp' | 'string') =>
        resourceSchema.parse({
          environment: { name: 'test' },
          connector: { kind: 'sql', url: upstream.url, table },
          fields: { id: 'string', title: 'string', rev },
          version_field: 'rev',
          review_fields: ['id', 'title'],
        })
      const stamped = createSqlConnector({ resource: resourceOf('stamped', 'timestamp'), now: () => clock.now })
      const tagged = createSqlConnector({ resource: resourceOf('tagged', 'string') })
      try {
        const before = (await stamped.readByIds(['s1'])).records.get('s1')!
        assert.equal(before.version, '2024-01-01T00:00:00.123Z')
        const written = await stamped.write({ id: 's1', expectedVersion: before.version, set: { title: 'two' }, precondition: {} })
        assert.equal(written.kind, 'written', JSON.stringify(written))
        assert.equal(written.kind === 'written' && written.record?.version, clock.now.toISOString())
        const stale = await stamped.write({ id: 's1', expectedVersion: before.version, set: { title: 'three' }, precondition: {} })
        assert.equal(stale.kind === 'conflict' && stale.reason, 'version_changed')

        const first = await tagged.write({ id: 't1', expectedVersion: 'rev-abc', set: { title: 'two' }, precondition: { title: 'one' } })
        assert.equal(first.kind, 'written')
        const next = first.kind === 'written' ? first.record!.version : ''
        assert.ok(next !== 'rev-abc' && next.length > 0)
        const again = await tagged.write({ id: 't1', expectedVersion: 'rev-abc', set: { title: 'three' }, precondition: {} })
        assert.equal(again.kind === 'conflict' && again.reason, 'version_changed')
        const wrongPre = await tagged.write({ id: 't1', expectedVersion: next, set: { title: 'three' }, precondition: { title: 'one' } })
        assert.equal(wrongPre.kind === 'conflict' && wrongPre.reason, 'precondition_failed')
      } finally {
        await stamped.close()
        await tagged.close()
      }
    })

    it('a session nobody reads from expires: its next read is cursor_expired, never a silent restart', async () => {
      await upstream.reset(plainRows(5))
      const short = make({ sessionIdleTimeoutMs: 40 })
      try {
        const session = await short.openSession()
        const first = await session.readPage({ source: 'things-db', filter: {}, position: null, pageSize: 2 })
        assert.ok(first.kind === 'page')
        await new Promise((resolve) => setTimeout(resolve, 120))
        const later = await session.readPage({ source: 'things-db', filter: {}, position: first.next, pageSize: 2 })
        assert.equal(later.kind, 'cursor_expired')
        await session.close()
      } finally {
        await short.close()
      }
    })

    it('close() ends sessions left open, and the connector then refuses politely', async () => {
      await upstream.reset(plainRows(5))
      const other = make()
      const leaked = await other.openSession()
      await (await other.openSession()).readPage({ source: 'things-db', filter: {}, position: null, pageSize: 1 })
      await other.close()
      const after = await leaked.readPage({ source: 'things-db', filter: {}, position: null, pageSize: 2 })
      assert.equal(after.kind, 'cursor_expired')
      const session = await other.openSession()
      assert.equal((await session.readPage({ source: 'things-db', filter: {}, position: null, pageSize: 2 })).kind, 'unavailable')
      const write = await other.write({ id: 'row_0001', expectedVersion: '1', set: { name: 'x' }, precondition: {} })
      assert.equal(write.kind, 'rejected')
      await other.close()
      // a writer was never blocked by the leaked session's transaction
      await upstream.exec('update things set name = ? where id = ?', ['after-close', 'row_0001'])
    })
  })
}

describe('sql connector: an unreachable upstream is a result, not a crash', () => {
  const cases: [string, string][] = [
    ['sqlite (no folder)', 'sqlite:/nonexistent-warrant-dir/none.db'],
    ['sqlite (no file)', `sqlite:${join(tmpdir(), `warrant-missing-${process.pid}.db`)}`],
    ['postgres', 'postgres://postgres@127.0.0.1:1/none'],
    ['mysql', 'mysql://root@127.0.0.1:1/none'],
    ['mysql (no such database)', 'mysql://root@127.0.0.1:3306/warrant_no_such_database'],
  ]
  for (const [name, url] of cases) {
    it(name, async () => {
      const calls: UpstreamCall[] = []
      const connector = createSqlConnector({ resource: resourceFor(url), onCall: (c) => calls.push(c) })
      try {
        const session = await connector.openSession()
        const page = await session.readPage({ source: 'things-db', filter: {}, position: null, pageSize: 10 })
        assert.equal(page.kind, 'unavailable')
        await session.close()
        const byId = await connector.readByIds(['a', 'b'])
        assert.deepEqual(byId.failed.map((f) => f.id), ['a', 'b'])
        assert.deepEqual(byId.missing, [])
        const write = await connector.write({ id: 'a', expectedVersion: '1', set: { name: 'x' }, precondition: {} })
        // no connection, so no statement: a definite failure that says the database was not reached
        assert.equal(write.kind, 'not_sent', JSON.stringify(write))
        assert.match(write.kind === 'not_sent' ? write.message : '', /^the database could not be reached/)
        assert.ok(calls.every((c) => c.outcome === 'error' || c.outcome === 'not_sent'))
      } finally {
        await connector.close()
      }
    })
  }
  it('a password never appears in what the connector says', async () => {
    for (const url of ['postgres://postgres@127.0.0.1:1/none', 'mysql://root@127.0.0.1:1/none', 'mysql://root:s3cr3t-pw@127.0.0.1:1/none']) {
      const connector = createSqlConnector({ resource: resourceFor(url), password: 's3cr3t-pw' })
      try {
        const session = await connector.openSession()
        const page = await session.readPage({ source: 'things-db', filter: {}, position: null, pageSize: 10 })
        assert.ok(page.kind === 'unavailable' && !page.message.includes('s3cr3t-pw'), url)
        const write = await connector.write({ id: 'a', expectedVersion: '1', set: { name: 'x' }, precondition: {} })
        assert.ok(!JSON.stringify(write).includes('s3cr3t-pw'), url)
      } finally {
        await connector.close()
      }
    }
  })
})


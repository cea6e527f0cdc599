import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { parseConfig } from '../../../src/config/index.js'
import { SYSTEM_ACTOR, type Filter } from '../../../src/contract/index.js'
import type { SqlConnector } from '../../../src/connectors/sql/index.js'
import { createCursorCodec } from '../../../src/inventory/index.js'
import { createCatalogue, type Catalogue } from '../../../src/resources/index.js'
import { createSelectionService, type SelectionService } from '../../../src/selections/index.js'
import { createTestStore, type TestStore } from '../../support/stores.js'
import { createEngine, search, type Engine } from './support/engine.js'

/**
 * A MySQL/MariaDB date that names no day ('0000-00-00', '2024-00-10', '2024-06-00 10:00:00') is no instant, so no
 * filter on a timestamp field can judge it. The engine does all the same: '0000-00-00' < '2024-01-01' is true, so
 * `lt` let it through (to be named as not judged) while `gt`, `gte`, `eq` and `in` left it out, each answer saying
 * complete. Whatever the operator, such a row is now counted as not judged, the answer not complete; the rows that
 * name instants are answered as before, and NULL matches no comparison (as documented).
 */
describe('sql connector on MariaDB: filters on a timestamp field over a column holding zero dates', () => {
  let engine: Engine
  let connector: SqlConnector
  let store: TestStore
  let catalogue: Catalogue
  let selections: SelectionService
  before(async () => {
    engine = await createEngine('mysql')
    await engine.exec(`create table things (id varchar(10) primary key, version int not null, d date, at datetime(3), ts timestamp null) engine = InnoDB`)
    // the server's strict mode refuses these; an upstream that ran without it holds them
    await engine.exec(`set session sql_mode = ''`)
    await engine.exec(`insert into things values
      ('a-zero', 1, '0000-00-00', '0000-00-00 00:00:00', '0000-00-00 00:00:00'),
      ('b-month', 1, '2024-00-10', '2024-06-00 10:00:00', null),
      ('c-none', 1, null, null, null),
      ('d-plain', 1, '2024-06-01', '2024-06-01 12:00:00.250', '2024-06-01 12:00:00'),
      ('e-early', 1, '2023-01-01', '2023-01-01 00:00:00', '2023-01-01 00:00:00')`)
    const fields = { id: 'string', version: 'integer', d: 'timestamp', at: 'timestamp', ts: 'timestamp' }
    connector = engine.connector('things', fields)
    store = await createTestStore('sqlite')
    const config = parseConfig({
      store: store.url,
      resources: { things: { environment: { name: 'test' }, connector: { kind: 'sql', url: engine.url, table: 'things' }, fields, version_field: 'version', review_fields: ['id'] } },
    })
    catalogue = createCatalogue({ config })
    selections = createSelectionService({ store: store.store, catalogue, cursorCodec: createCursorCodec({ key: 'k'.repeat(32) }) })
  })
  after(async () => {
    await catalogue?.close()
    await store?.drop()
    await engine?.drop()
  })

  const unjudgedOf = (reasons: readonly { code: string }[]) => (reasons.find((r) => r.code === 'SHAPE_MISMATCH') as { record_count?: number } | undefined)?.record_count

  // field, filter, the ids that name an instant and match, how many rows hold a date naming no day
  const cases: [string, Filter, string[], number][] = [
    ['d', { d: { gt: '2023-06-01' } }, ['d-plain'], 2],
    ['d', { d: { gte: '2023-01-01' } }, ['d-plain', 'e-early'], 2],
    ['d', { d: { lt: '2024-01-01' } }, ['e-early'], 2],
    ['d', { d: { lte: '2024-06-01' } }, ['d-plain', 'e-early'], 2],
    ['d', { d: { eq: '2024-06-01' } }, ['d-plain'], 2],
    ['d', { d: { in: ['2024-06-01', '2023-01-01'] } }, ['d-plain', 'e-early'], 2],
    ['d', { d: { not_in: ['2024-06-01'] } }, ['e-early'], 2],
    ['at', { at: { gt: '2024-01-01T00:00:00Z' } }, ['d-plain'], 2],
    ['at', { at: { eq: '2024-06-01T12:00:00.250Z' } }, ['d-plain'], 2],
    ['ts', { ts: { gte: '2023-06-01T00:00:00Z' } }, ['d-plain'], 1],
  ]
  for (const [, filter, ids, unjudged] of cases) {
    it(`${JSON.stringify(filter)}: the rows of a zero date are counted as not judged, never left out of a complete answer`, async () => {
      const envelope = await search(connector, filter, 2)
      assert.deepEqual(envelope.items.map((r) => r.id), ids)
      assert.equal(envelope.complete, false, JSON.stringify(envelope.incomplete_reasons))
      assert.equal(unjudgedOf(envelope.incomplete_reasons), unjudged, JSON.stringify(envelope.incomplete_reasons))
    })
  }

  it('a selection on such a filter is not complete, and cannot be used for a change', async () => {
    const view = await selections.create(SYSTEM_ACTOR, 'things', { filter: { d: { gt: '2024-03-01' } } })
    assert.deepEqual(view.records.map((r) => r.id), ['d-plain'])
    assert.equal(view.complete, false, JSON.stringify(view.incomplete_reasons))
    assert.equal(unjudgedOf(view.incomplete_reasons), 2)
    const record = await selections.load(SYSTEM_ACTOR, view.selection_id)
    assert.throws(() => selections.assertUsable(record), (e: { code?: string }) => e.code === 'selection_incomplete')
  })

  it('a day past the end of its month (kept under ALLOW_INVALID_DATES) is counted as not judged too', async () => {
    await engine.exec(`create table later (id varchar(10) primary key, version int not null, d date, at datetime) engine = InnoDB`)
    await engine.exec(`set session sql_mode = 'ALLOW_INVALID_DATES'`)
    await engine.exec(`insert into later values ('invalid', 1, '2024-02-30', '2024-02-31 10:00:00'), ('plain', 1, '2024-03-02', '2024-03-02 10:00:00')`)
    const later = engine.connector('later', { id: 'string', version: 'integer', d: 'timestamp', at: 'timestamp' })
    for (const filter of [{ d: { gt: '2024-03-01' } }, { at: { gte: '2024-03-01T00:00:00Z' } }] as Filter[]) {
      const envelope = await search(later, filter, 2)
      assert.deepEqual(envelope.items.map((r) => r.id), ['plain'])
      assert.equal(envelope.complete, false, JSON.stringify(envelope.incomplete_reasons))
      assert.equal(unjudgedOf(envelope.incomplete_reasons), 1)
    }
  })

  it('a filter on a date column without zero dates stays complete; NULL matches no comparison', async () => {
    const envelope = await search(connector, { d: { gt: '2023-06-01' }, id: { in: ['c-none', 'd-plain', 'e-early'] } }, 2)
    assert.deepEqual(envelope.items.map((r) => r.id), ['d-plain'])
    assert.equal(envelope.complete, true, JSON.stringify(envelope.incomplete_reasons))
  })
})

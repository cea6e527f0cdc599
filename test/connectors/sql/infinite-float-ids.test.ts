import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { SqlConnector } from '../../../src/connectors/sql/index.js'
import { createCursorCodec, searchAll } from '../../../src/inventory/index.js'
import { createUpstream, ledgerConnector, type Upstream } from './support/upstream.js'

/**
 * A float id column can hold what no position carries: PostgreSQL's float8 '-Infinity' (ordered first), SQLite's
 * 9e999. A page ending on one gave the position `{"after":null}`, which the next read refused as not issued by the
 * connector; the walk read none of the rows after it and answered "retry after 2 s with the cursor", a cursor that
 * failed the same way every time. Such a page is refused, naming the id column: not complete, nothing to retry.
 */
const scope = { resource: 'ledger', environment: 'test', visibility: 'all', restricted: false }
const codec = createCursorCodec({ key: 'k'.repeat(32) })

const SETUP = {
  postgres: { table: 'create table ledger (id float8 primary key, version integer not null)', rows: [`'-Infinity'`, `1`, `2`] },
  sqlite: { table: 'create table ledger (id real primary key, version integer not null)', rows: [`-9e999`, `1`, `2`] },
} as const

for (const kind of ['postgres', 'sqlite'] as const) {
  describe(`sql on ${kind}: a float id column holding -Infinity`, () => {
    let upstream: Upstream
    let connector: SqlConnector
    before(async () => {
      upstream = await createUpstream(kind)
      await upstream.exec(SETUP[kind].table)
      for (const row of SETUP[kind].rows) await upstream.exec(`insert into ledger (id, version) values (${row}, 1)`)
      connector = ledgerConnector(upstream.url, { id: 'number', version: 'integer' })
    })
    after(async () => {
      await connector?.close()
      await upstream?.drop()
    })

    it('a page ending on it is refused, naming the id column, with no retry to follow', async () => {
      const envelope = await searchAll(connector, { resource: 'ledger', filter: {}, pageSize: 1 }, {}, { scope, cursorCodec: codec })
      assert.equal(envelope.complete, false)
      assert.equal(envelope.continuation, null, JSON.stringify(envelope.continuation))
      const reason = envelope.incomplete_reasons.find((r) => r.code === 'SOURCE_UNAVAILABLE')
      assert.ok(reason, JSON.stringify(envelope.incomplete_reasons))
      assert.match(reason.message, /"id".*-Infinity.*no position/)
      assert.equal((reason as { retry_after_seconds?: number }).retry_after_seconds, undefined)
    })

    it('in a page that holds it and more, every finite id is walked; the infinite one is counted, not judged', async () => {
      const envelope = await searchAll(connector, { resource: 'ledger', filter: {}, pageSize: 2 }, {}, { scope, cursorCodec: codec })
      assert.deepEqual(envelope.items.map((r) => r.id), ['1', '2'])
      assert.equal(envelope.complete, false)
      assert.deepEqual(envelope.incomplete_reasons.map((r) => r.code), ['SHAPE_MISMATCH'])
    })
  })
}

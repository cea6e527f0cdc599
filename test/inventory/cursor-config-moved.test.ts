import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { searchResource } from '../../src/resources/index.js'
import type { GatewayFixture } from '../support/gateway-fixture.js'
import { sqliteResourceGateway } from '../support/sqlite-resource-gateway.js'

/**
 * A continuation cursor holds positions in one table (or one http list), named by one id column. It was bound to the
 * resource, its environment label, the filter and the fields only: after a restart on a config whose connector reads
 * another table (an archive beside the live one), or names records by another column, the label left as it was, the
 * same cursor was taken and the walk read the rest of the other table from the first one's position, answering
 * `complete: true` for a walk whose first part came from one table and the rest from another, the second table's
 * records before that position never read. Now the cursor is bound to where, and by what, the connector reads.
 */
describe('a continuation cursor after the resource was pointed at another table or id column', () => {
  let ledger: Awaited<ReturnType<typeof sqliteResourceGateway>>
  let fx: GatewayFixture
  before(async () => {
    ledger = await sqliteResourceGateway(
      'ledger',
      (db) => {
        for (const table of ['live', 'archive']) {
          db.exec(`create table ${table} (id text primary key, ref text not null unique, status text not null, version integer not null)`)
          for (let i = 0; i < 6; i++) db.exec(`insert into ${table} values ('${table}-${i}', 'ref-${table}-${i}', 'open', 1)`)
        }
      },
      (url) => ({
        environment: { name: 'ledger-prod' },
        connector: { kind: 'sql', url, table: 'live' },
        fields: { id: 'string', ref: 'string', status: 'string', version: 'integer' },
        id_field: 'id',
        version_field: 'version',
        review_fields: ['id', 'ref', 'status'],
      }),
    )
    fx = ledger.fx
  })
  after(async () => {
    await ledger?.close()
  })

  for (const [what, edit] of [
    ['another table', (r: Record<string, any>) => void (r.connector.table = 'archive')],
    ['another id column', (r: Record<string, any>) => void (r.id_field = 'ref')],
  ] as const)
    test(`${what}: the cursor is refused as another query's (invalid_cursor, other_query), nothing read`, async () => {
      const first = await searchResource(fx.gateway.catalogue.get('ledger'), { filter: { status: 'open' }, page_size: 2, budget: { max_pages: 1 } }, { cursorCodec: fx.gateway.cursorCodec })
      assert.equal(first.complete, false)
      const cursor = (first.continuation as { cursor: string }).cursor
      const moved = await ledger.reopened(edit)
      try {
        await assert.rejects(
          searchResource(moved.catalogue.get('ledger'), { filter: { status: 'open' }, page_size: 2, cursor }, { cursorCodec: moved.cursorCodec }),
          (e: any) => {
            assert.equal(e.code, 'invalid_cursor', e.message)
            assert.equal(e.details?.reason, 'other_query')
            assert.match(e.message, /connector/)
            return true
          },
        )
        await moved.audit.flush()
      } finally {
        await moved.close()
      }
      // where it was issued, it continues
      const rest = await searchResource(fx.gateway.catalogue.get('ledger'), { filter: { status: 'open' }, page_size: 2, cursor }, { cursorCodec: fx.gateway.cursorCodec })
      assert.equal(rest.complete, true)
      assert.deepEqual(rest.items.map((r) => r.id), ['live-2', 'live-3', 'live-4', 'live-5'])
    })
})

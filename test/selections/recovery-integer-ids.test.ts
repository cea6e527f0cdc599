import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import BetterSqlite3 from 'better-sqlite3'
import { SYSTEM_ACTOR, WarrantError } from '../../src/contract/index.js'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { createTempDir, type TempDir } from '../support/stores.js'

/** 2^53 + 1 is not a JSON number: in a filter it reads as 2^53, the id of the row beside it. */
const IDS = ['9007199254740992', '9007199254740993', '9007199254740994', '9007199254740995']

/**
 * A recovery is a filter `{id: {in: [...]}}` over the ids an incomplete selection returned, and a filter's
 * numbers are JSON numbers. For ids past 2^53 (a table keyed by 64-bit integers, declared `number` or
 * `integer`), that filter would name other rows: 2^53 + 1 becomes 2^53. The recovery is refused, saying why,
 * and freezes nothing; before, for an id declared `number`, it froze the neighbour.
 */
describe('recovering a selection of ids past 2^53', () => {
  let fx: GatewayFixture
  let dir: TempDir
  before(async () => {
    dir = await createTempDir('warrant-big-ids-')
    const file = join(dir.path, 'ledger.db')
    const db = new BetterSqlite3(file)
    db.exec('create table ledger (id integer primary key, version integer not null, name text)')
    for (const id of IDS) db.exec(`insert into ledger values (${id}, 1, 'n${id.slice(-2)}')`)
    db.close()
    fx = await startDemoGateway({
      store: 'sqlite',
      count: 10,
      edit: (raw) => {
        for (const idType of ['number', 'integer'])
          raw.resources[`ledger_${idType}`] = {
            environment: raw.resources.subscriptions.environment,
            connector: { kind: 'sql', url: `sqlite:${file}`, table: 'ledger' },
            fields: { id: idType, version: 'integer', name: 'string' },
            id_field: 'id',
            version_field: 'version',
            review_fields: ['id', 'name'],
          }
      },
    })
  })
  after(async () => {
    await fx?.close()
    await dir?.drop()
  })

  for (const idType of ['number', 'integer'] as const) {
    test(`id declared ${idType}: refused by name, nothing frozen`, async () => {
      const resource = `ledger_${idType}`
      // one page of two: incomplete, holding 2^53 and 2^53 + 1
      const partial = await fx.gateway.selections.create(SYSTEM_ACTOR, resource, { page_size: 2, budget: { max_pages: 1 } })
      assert.equal(partial.complete, false)
      assert.deepEqual(
        partial.records.map((r) => r.id),
        IDS.slice(0, 2),
      )
      const before = await fx.gateway.store.db.selectFrom('selections').select('id').execute()
      await assert.rejects(
        () => fx.gateway.selections.recover(SYSTEM_ACTOR, partial.selection_id),
        (error: unknown) => error instanceof WarrantError && error.code === 'invalid_request' && /"900719925474099[23]"/.test(error.message) && /past 2\^53/.test(error.message),
      )
      const afterwards = await fx.gateway.store.db.selectFrom('selections').select('id').execute()
      assert.equal(afterwards.length, before.length, 'no recovery was frozen')
    })
  }

  test('ids a number holds exactly are still recovered', async () => {
    const partial = await fx.gateway.selections.create(SYSTEM_ACTOR, 'subscriptions', { page_size: 2, budget: { max_pages: 1 } })
    assert.equal(partial.complete, false)
    const recovered = await fx.gateway.selections.recover(SYSTEM_ACTOR, partial.selection_id)
    assert.equal(recovered.count, 2)
  })
})

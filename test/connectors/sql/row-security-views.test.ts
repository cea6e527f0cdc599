import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { createEngine, search, type Engine } from './support/engine.js'
import { createGuardedTable, dropRoles, urlAs } from './support/guarded-table.js'

/**
 * A resource on a PostgreSQL VIEW over a table under row-level security. A view has no row security of its own,
 * so the connector saw none and a walk said complete; but the table's policies apply to the view's owner (as whom
 * a view reads its tables), or to the connecting role where the view is `security_invoker`, and every read left
 * out the rows they hide, without a word. The walk is VISIBILITY_RESTRICTED naming the table, a hidden id is not
 * "missing" (and `warrant check`, which walks the first pages, says so); a view whose owner the policies do not bind reads complete as before.
 */
const FIELDS = { id: 'string', status: 'string', version: 'integer' }

describe('sql on postgres: a view over a table whose row-level security binds the role it reads as', () => {
  let engine: Engine
  const suffix = randomBytes(4).toString('hex')
  const reader = `warrant_rlsv_reader_${suffix}`
  const owner = `warrant_rlsv_owner_${suffix}`
  const bypass = `warrant_rlsv_bypass_${suffix}`
  let readerUrl: string
  before(async () => {
    engine = await createEngine('postgres')
    await createGuardedTable(engine)
    await engine.exec(`create role ${reader} login`)
    await engine.exec(`create role ${owner}`)
    await engine.exec(`create role ${bypass} bypassrls`)
    await engine.exec(`grant select, update on guarded to ${owner}, ${bypass}`)
    // owned by the table's owner, whom the policies (not forced) do not bind: every row
    await engine.exec('create view by_table_owner as select * from guarded')
    // owned by another role, as whom the view reads: the policies bind it
    await engine.exec('create view by_other_owner as select * from guarded')
    await engine.exec(`alter view by_other_owner owner to ${owner}`)
    // security_invoker: read as the connecting role, whom the policies bind
    await engine.exec('create view as_invoker with (security_invoker = true) as select * from guarded')
    // a view over the view another role owns, itself owned by the table's owner
    await engine.exec('create view nested as select * from by_other_owner')
    // a view owned by a BYPASSRLS role: every row
    await engine.exec('create view by_bypass as select * from guarded')
    await engine.exec(`alter view by_bypass owner to ${bypass}`)
    for (const view of ['by_table_owner', 'by_other_owner', 'as_invoker', 'nested', 'by_bypass']) await engine.exec(`grant select, update on ${view} to ${reader}`)
    await engine.exec(`grant select, update on guarded to ${reader}`)
    readerUrl = urlAs(engine, reader)
  })
  after(async () => {
    await engine?.drop()
    await dropRoles([reader, owner, bypass])
  })

  const connectorTo = (view: string) => engine.connector(view, FIELDS, { connector: { kind: 'sql', url: readerUrl, table: view, source: 'things-db' } })

  for (const view of ['by_other_owner', 'as_invoker', 'nested'])
    it(`${view}: a walk is not complete, VISIBILITY_RESTRICTED naming the table's row-level security`, async () => {
      const envelope = await search(connectorTo(view), {}, 100)
      assert.equal(envelope.complete, false, `returned ${JSON.stringify(envelope.items.map((i) => i.id))} and said complete`)
      const reason = envelope.incomplete_reasons.find((r) => r.code === 'VISIBILITY_RESTRICTED')
      assert.match(reason?.message ?? JSON.stringify(envelope.incomplete_reasons), /row-level security.*guarded/)
      const read = await connectorTo(view).readByIds(['b'])
      assert.deepEqual(read.missing, [], 'a row the policy hides is not proven absent')
      assert.match(read.failed[0]?.message ?? '', /row-level security/)
    })

  for (const view of ['by_table_owner', 'by_bypass'])
    it(`${view}: the policies bind no role it reads as, and a walk is complete with every row`, async () => {
      const envelope = await search(connectorTo(view), {}, 100)
      assert.equal(envelope.complete, true, JSON.stringify(envelope.incomplete_reasons))
      assert.deepEqual(envelope.items.map((i) => i.id), ['a', 'b', 'c'])
    })
})

import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { createEngine, search, type Engine } from './support/engine.js'
import { createGuardedTable, dropRoles, urlAs } from './support/guarded-table.js'

/**
 * A PostgreSQL table under row-level security whose policies apply to the role Warrant connects as: every SELECT
 * silently leaves out the rows a policy hides. The walk read the visible rows and said complete, so a selection
 * "every past_due subscription" froze none of the hidden past_due ones, and absence was "proven"; a read by the
 * id of a hidden row said it does not exist. The walk is VISIBILITY_RESTRICTED, naming the table and the fix,
 * a hidden id is not proven missing, and `warrant check` names it; the owner (policies not forced) reads as before.
 */
const FIELDS = { id: 'string', status: 'string', version: 'integer' }

describe('sql on postgres: a table whose row-level security applies to the connecting role', () => {
  let engine: Engine
  const role = `warrant_rls_${randomBytes(4).toString('hex')}`
  let roleUrl: string
  before(async () => {
    engine = await createEngine('postgres')
    await createGuardedTable(engine)
    await engine.exec(`create role ${role} login`)
    await engine.exec(`grant select, update on guarded to ${role}`)
    roleUrl = urlAs(engine, role)
  })
  after(async () => {
    await engine?.drop()
    await dropRoles([role])
  })

  const connectorAs = () => engine.connector('guarded', FIELDS, { connector: { kind: 'sql', url: roleUrl, table: 'guarded', source: 'things-db' } })

  it('a walk is not complete, VISIBILITY_RESTRICTED naming row-level security', async () => {
    const envelope = await search(connectorAs(), {}, 100)
    assert.equal(envelope.complete, false, `returned ${JSON.stringify(envelope.items.map((i) => i.id))} and said complete`)
    const reason = envelope.incomplete_reasons.find((r) => r.code === 'VISIBILITY_RESTRICTED')
    assert.match(reason?.message ?? JSON.stringify(envelope.incomplete_reasons), /row-level security/)
    // a database answers no HTTP status: the connector's own 403 for hidden rows is not shown as the upstream's
    assert.equal(reason?.upstream_status, undefined, JSON.stringify(reason))
    assert.doesNotMatch(reason?.message ?? '', /answered 403/)
  })

  it('a read by the id of a hidden row is not "missing"', async () => {
    const result = await connectorAs().readByIds(['b'])
    assert.deepEqual(result.missing, [])
    assert.match(result.failed[0]?.message ?? '', /row-level security/)
  })

  // the policy hides "b" from the UPDATE as from the SELECT: no row matched, none found, and none proven absent
  it('a write to a row a policy hides is not "missing": refused naming row-level security, nothing written', async () => {
    const single = await connectorAs().write({ id: 'b', expectedVersion: '1', set: { status: 'active' }, precondition: {} })
    assert.equal(single.kind, 'rejected', JSON.stringify(single))
    assert.match(single.kind === 'rejected' ? single.message : '', /nothing was written: record "b" was not found, which does not prove it absent: table guarded has row-level security/)
    const window = await connectorAs().writeWindow!([{ id: 'b', expectedVersion: '1', set: { status: 'active' }, precondition: {} }, { id: 'zz', expectedVersion: '1', set: { status: 'active' }, precondition: {} }])
    assert.deepEqual(window.map((o) => o.kind), ['rejected', 'rejected'], JSON.stringify(window))
    assert.match(window[0]!.kind === 'rejected' ? window[0]!.message : '', /record "b" was not found, which does not prove it absent: .*row-level security/)
    assert.deepEqual(await engine.rows("select status, version from guarded where id = 'b'"), [{ status: 'past_due', version: 1 }])
  })

  it('the table owner, whom the policies do not bind, walks it complete', async () => {
    const envelope = await search(engine.connector('guarded', FIELDS), {}, 100)
    assert.equal(envelope.complete, true, JSON.stringify(envelope.incomplete_reasons))
    assert.deepEqual(envelope.items.map((i) => i.id), ['a', 'b', 'c'])
  })
})

/**
 * A policy may keep a row from an UPDATE that a SELECT shows (`for update using (status <> 'locked')`): the UPDATE
 * matched nothing, the row read after it is at the expected version and meets the precondition, and the write was
 * answered "no longer meets the action's precondition", a skip for a change nobody made. It is refused naming
 * row-level security; a row that really no longer meets the precondition is still `precondition_failed`.
 */
describe('sql on postgres: a row-level security policy that keeps a visible row from the UPDATE', () => {
  let engine: Engine
  const role = `warrant_rls_${randomBytes(4).toString('hex')}`
  before(async () => {
    engine = await createEngine('postgres')
    await engine.exec('create table locks (id text primary key, status text, version integer not null)')
    await engine.exec("insert into locks values ('a', 'locked', 1), ('b', 'locked', 1), ('c', 'open', 1)")
    await engine.exec('alter table locks enable row level security')
    await engine.exec('create policy everyone_reads on locks for select using (true)')
    await engine.exec("create policy unlocked_writes on locks for update using (status <> 'locked')")
    await engine.exec(`create role ${role} login`)
    await engine.exec(`grant select, update on locks to ${role}`)
  })
  after(async () => {
    await engine?.drop()
    await dropRoles([role])
  })
  const connectorAs = () => engine.connector('locks', FIELDS, { connector: { kind: 'sql', url: urlAs(engine, role), table: 'locks', source: 'things-db' } })

  it('a write the policy keeps from the row is refused naming row-level security, not precondition_failed', async () => {
    const single = await connectorAs().write({ id: 'a', expectedVersion: '1', set: { status: 'open' }, precondition: { status: 'locked' } })
    assert.equal(single.kind, 'rejected', JSON.stringify(single))
    assert.match(single.kind === 'rejected' ? single.message : '', /nothing was written: record "a" is at the expected version 1 and meets the precondition, .*row-level security/)
    const window = await connectorAs().writeWindow!([{ id: 'b', expectedVersion: '1', set: { status: 'open' }, precondition: {} }])
    assert.equal(window[0]?.kind, 'rejected', JSON.stringify(window))
    assert.deepEqual(await engine.rows("select id, status, version from locks where id in ('a', 'b') order by id"), [
      { id: 'a', status: 'locked', version: 1 },
      { id: 'b', status: 'locked', version: 1 },
    ])
  })

  it('a row that no longer meets the precondition is precondition_failed as before', async () => {
    const outcome = await connectorAs().write({ id: 'c', expectedVersion: '1', set: { status: 'closed' }, precondition: { status: 'locked' } })
    assert.deepEqual([outcome.kind, 'reason' in outcome ? outcome.reason : null], ['conflict', 'precondition_failed'], JSON.stringify(outcome))
  })
})

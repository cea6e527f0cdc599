import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { SqlConnector } from '../../../src/connectors/sql/index.js'
import { createEngine, type Engine } from './support/engine.js'

/**
 * On MariaDB and MySQL every write is read back before COMMIT. A BEFORE UPDATE trigger that rewrites a column the
 * action does not set (here: `note` upper-cased when a record is closed), or a generated column over a set one,
 * left the read-back row holding a value nobody approved, and the write was committed: the executor then saw
 * "the write touched what the action does not set" and halted, but the unapproved value was already in the table.
 * A field outside the set (the version and the `updated_at` the connector stamps aside) that the read-back row
 * holds otherwise than the record re-read just before the write (`current`) is now refused and rolled back.
 */
describe('sql connector on MariaDB: a write that changes a field outside its set', () => {
  let engine: Engine
  let connector: SqlConnector
  const FIELDS = { id: 'string', version: 'integer', status: 'string', note: 'string', amount: 'number', twice: 'number', updated_at: 'timestamp' }
  before(async () => {
    engine = await createEngine('mysql')
    await engine.exec(`create table things (id varchar(10) primary key, version int not null, status varchar(10) not null, note varchar(20),
      amount decimal(10,3) not null, twice decimal(12,3) as (amount * 2) virtual, updated_at datetime(3) not null) engine = InnoDB`)
    await engine.exec("create trigger shout before update on things for each row set new.note = if(new.status = 'closed', upper(new.note), new.note)")
    await engine.exec(`insert into things (id, version, status, note, amount, updated_at) values
      ('r1', 1, 'open', 'quiet', 1.5, '2024-01-01 00:00:00'), ('r2', 1, 'open', 'quiet', 1.5, '2024-01-01 00:00:00')`)
    connector = engine.connector('things', FIELDS)
  })
  after(async () => {
    await engine?.drop()
  })

  const current = async (id: string) => {
    const read = await connector.readByIds([id])
    const record = read.records.get(id)
    assert.ok(record, JSON.stringify(read))
    return record
  }

  it('a trigger rewriting an unset column: refused and rolled back, naming the field', async () => {
    const record = await current('r1')
    const outcome = await connector.write({ id: 'r1', expectedVersion: '1', set: { status: 'closed' }, precondition: { status: 'open' }, current: record })
    assert.equal(outcome.kind, 'rejected', JSON.stringify(outcome))
    assert.ok(outcome.kind === 'rejected' && /"note"/.test(outcome.message) && /nothing was written/.test(outcome.message), JSON.stringify(outcome))
    assert.deepEqual(await engine.rows(`select version, status, note from things where id = 'r1'`), [{ version: 1, status: 'open', note: 'quiet' }])
  })

  it('a generated column over a set column: refused and rolled back, naming the field', async () => {
    const record = await current('r2')
    const outcome = await connector.write({ id: 'r2', expectedVersion: '1', set: { amount: 2.5 }, precondition: {}, current: record })
    assert.equal(outcome.kind, 'rejected', JSON.stringify(outcome))
    assert.ok(outcome.kind === 'rejected' && /"twice"/.test(outcome.message) && /nothing was written/.test(outcome.message), JSON.stringify(outcome))
    assert.deepEqual(await engine.rows(`select version, amount from things where id = 'r2'`), [{ version: 1, amount: '1.500' }])
  })

  it('a write that leaves every other field as it was is written (the version and updated_at move)', async () => {
    const record = await current('r2')
    const outcome = await connector.write({ id: 'r2', expectedVersion: '1', set: { note: 'calm' }, precondition: {}, current: record })
    assert.equal(outcome.kind, 'written', JSON.stringify(outcome))
    assert.deepEqual(await engine.rows(`select version, note from things where id = 'r2'`), [{ version: 2, note: 'calm' }])
  })

  it("a field the plan lets the write change (the action's write.may_change) is not judged", async () => {
    await engine.exec("insert into things (id, version, status, note, amount, updated_at) values ('r3', 1, 'open', 'quiet', 1.5, '2024-01-01 00:00:00')")
    const record = await current('r3')
    const outcome = await connector.write({ id: 'r3', expectedVersion: '1', set: { status: 'closed' }, precondition: {}, current: record, mayChange: ['status', 'version', 'note'] })
    assert.equal(outcome.kind, 'written', JSON.stringify(outcome))
    assert.deepEqual(await engine.rows(`select status, note from things where id = 'r3'`), [{ status: 'closed', note: 'QUIET' }])
  })

  it('without the record re-read before the write, nothing more is judged than before', async () => {
    const outcome = await connector.write({ id: 'r1', expectedVersion: '1', set: { note: 'soft' }, precondition: {} })
    assert.equal(outcome.kind, 'written', JSON.stringify(outcome))
  })
})

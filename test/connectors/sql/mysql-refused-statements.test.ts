import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createEngine, type Engine } from './support/engine.js'

/**
 * MariaDB answers some refusals with SQLSTATE HY000 (or 45000), no class that says "refused": a view's CHECK OPTION,
 * a view that cannot be updated, a value set on a generated column, a trigger's SIGNAL. Inside the write's
 * transaction these were `rolled_back`, as a connection lost before COMMIT is: counted toward the streak of errors
 * of reach, retried as an outage, never as the refusal it is. Each is `rejected`: nothing was written, and the same
 * write would be refused again.
 */
const FIELDS = { id: 'string', version: 'integer', status: 'string' }

describe('sql on MariaDB: statements the server refuses with HY000 or a SIGNAL', () => {
  let engine: Engine
  before(async () => {
    engine = await createEngine('mysql')
    for (const statement of [
      "create table base (id varchar(10) primary key, version integer not null, status varchar(10), shout varchar(20) as (upper(status)) stored)",
      "insert into base (id, version, status) values ('a', 1, 'active'), ('b', 1, 'active')",
      "create view checked as select id, version, status from base where status = 'active' with check option",
      'create view counted as select id, max(version) as version, max(status) as status from base group by id',
      "create trigger guard before update on base for each row begin if new.status = 'forbidden' then signal sqlstate '45000' set message_text = 'status forbidden'; end if; end",
    ])
      await engine.exec(statement)
  })
  after(() => engine?.drop())

  const cases = [
    ['a CHECK OPTION the row would leave', 'checked', FIELDS, { status: 'archived' }, 422, /CHECK OPTION failed/],
    ['a view that cannot be updated', 'counted', FIELDS, { status: 'archived' }, 500, /not updatable/],
    ['a value set on a generated column', 'base', { ...FIELDS, shout: 'string' }, { shout: 'X' }, 500, /generated column/],
    ['a trigger that signals', 'base', FIELDS, { status: 'forbidden' }, 422, /status forbidden/],
  ] as const
  for (const [title, table, fields, set, status, message] of cases)
    it(`${title}: rejected ${status}, nothing written`, async () => {
      const outcome = await engine.connector(table, fields).write({ id: 'a', expectedVersion: '1', set, precondition: {} })
      assert.equal(outcome.kind, 'rejected', JSON.stringify(outcome))
      assert.equal(outcome.kind === 'rejected' && outcome.status, status, JSON.stringify(outcome))
      assert.match(outcome.kind === 'rejected' ? outcome.message : '', message)
      assert.deepEqual(await engine.rows("select version, status from base where id = 'a'"), [{ version: 1, status: 'active' }])
    })
})

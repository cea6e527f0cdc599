import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { sql } from 'kysely'
import { createAuditLog, parseAuditKeys, type AuditCheckpoint, type AuditLog } from '../../src/audit/index.js'
import { STORE_KINDS, createTestStore, type TestStore } from '../support/stores.js'
import { K1, alter, operator, silent } from '../support/tampered-chain.js'

const keyring = parseAuditKeys(K1, 'test')

/**
 * `verify --checkpoint` proves the chain still holds the row the checkpoint names, with its hash. That comparison was
 * made only on a row the walk found good: a checkpoint's row inside an acknowledged gap (removed), or an acknowledged
 * break itself, was never compared, and the answer still said "checkpoint at seq N holds", "the checkpoint … still
 * holds", of a row no longer in the chain. An acknowledgement says a break was seen; it never makes a checkpoint true.
 */
for (const kind of STORE_KINDS) {
  describe(`a checkpoint whose row is inside an acknowledged break (${kind})`, () => {
    let ts: TestStore
    let audit: AuditLog
    let checkpoint: AuditCheckpoint
    before(async () => {
      ts = await createTestStore(kind)
      audit = createAuditLog({ store: ts.store, keyring, log: silent })
      for (let i = 0; i < 3; i++) await audit.record({ actor: operator, action: 'POST /v1/plans/{id}/approvals', plan_id: `plan_${i}`, summary: { i } })
      checkpoint = await audit.checkpoint(operator) // names row 4, the checkpoint's own row
      for (let i = 3; i < 6; i++) await audit.record({ actor: operator, action: 'POST /v1/plans/{id}/approvals', plan_id: `plan_${i}`, summary: { i } })
    })
    after(() => ts?.drop())

    test('the checkpoint holds on the intact chain', async () => {
      assert.equal(checkpoint.seq, 4)
      const result = await audit.verify({ checkpoint })
      assert.equal(result.status, 'ok', JSON.stringify(result))
    })

    test('its row altered, the break acknowledged: the checkpoint does not hold', async () => {
      const other = await createTestStore(kind)
      try {
        const log = createAuditLog({ store: other.store, keyring, log: silent })
        for (let i = 0; i < 3; i++) await log.record({ actor: operator, action: 'POST /v1/plans/{id}/approvals', plan_id: `plan_${i}`, summary: { i } })
        const taken = await log.checkpoint(operator)
        for (let i = 3; i < 6; i++) await log.record({ actor: operator, action: 'POST /v1/plans/{id}/approvals', plan_id: `plan_${i}`, summary: { i } })
        await alter(other.store, taken.seq, '{"edited":true}')
        const found = await log.verify()
        assert.equal(found.status === 'broken' && `${found.first_bad_seq} ${found.problem}`, `${taken.seq} altered`)
        await log.acknowledge({ at: taken.seq, reason: 'INC-8: summary edited by a DBA', actor: operator })

        const result = await log.verify({ checkpoint: taken })
        assert.equal(result.status, 'broken', JSON.stringify(result))
        assert.equal(result.status === 'broken' && `${result.first_bad_seq} ${result.problem}`, `${taken.seq} altered`)
        assert.match(result.status === 'broken' ? result.message : '', /which the checkpoint of .* names, is an acknowledged break/)
      } finally {
        await other.drop()
      }
    })

    test('its row removed with the rows around it, the gap acknowledged: the checkpoint does not hold', async () => {
      await sql`delete from audit_events where seq between 3 and 5`.execute(ts.store.db)
      const found = await audit.verify()
      assert.equal(found.status, 'broken')
      assert.equal(found.status === 'broken' && found.problem, 'removed')
      await audit.acknowledge({ at: found.status === 'broken' ? found.first_bad_seq : 0, reason: 'INC-7: rows lost in a restore', actor: operator })
      assert.equal((await audit.verify()).status, 'ok_with_acknowledged_breaks')

      const result = await audit.verify({ checkpoint })
      assert.equal(result.status, 'broken', JSON.stringify(result))
      assert.equal(result.status === 'broken' && result.problem, 'removed')
      assert.equal(result.status === 'broken' && result.first_bad_seq, 4)
      assert.match(result.status === 'broken' ? result.message : '', /row 4, which the checkpoint of .* names, is not in the chain/)
    })
  })
}

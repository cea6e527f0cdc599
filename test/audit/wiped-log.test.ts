import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { sql } from 'kysely'
import { createAuditLog, parseAuditKeys, verifyAuditChain } from '../../src/audit/index.js'
import type { Actor } from '../../src/contract/index.js'
import { STORE_KINDS, createTestStore } from '../support/stores.js'

const K1 = `k1 ${'a1'.repeat(32)}`
const silent = { error: () => undefined }
const reviewer: Actor = { principal: 'prn_rev', name: 'rev', role: 'reviewer', scopes: { resources: '*', actions: '*' }, surface: 'http' }

/**
 * A wiped log (every row and the chain head deleted; no key is needed for either) verified as ok, "signed", even
 * against a checkpoint naming a row. README, "What verify detects": rows cut from the end are caught with a key (the head is signed) and, with a
 * checkpoint, "yes, for rows up to the checkpoint". Someone with write access to the store deletes every row
 * and the head row in kv (no key needed for either).
 */
for (const kind of STORE_KINDS) {
  describe(`a wiped audit log (${kind})`, () => {
    test('every row and the head deleted: verify against a signed checkpoint of seq N must fail, not say ok', async () => {
      const ts = await createTestStore(kind)
      try {
        const keyring = parseAuditKeys(K1, 'test')
        const audit = createAuditLog({ store: ts.store, log: silent, keyring })
        for (let i = 0; i < 5; i++) await audit.record({ actor: reviewer, action: 'POST /v1/plans/{id}/approvals', plan_id: `pln_${i}`, summary: { status: 201 } })
        const checkpoint = await audit.checkpoint(reviewer)
        assert.ok(checkpoint.seq >= 6)
        assert.equal((await verifyAuditChain(ts.store.db, { keyring, checkpoint })).ok, true)

        await sql`delete from audit_events`.execute(ts.store.db)
        await sql`delete from kv where key = 'audit_chain_head'`.execute(ts.store.db)

        const withCheckpoint = await verifyAuditChain(ts.store.db, { keyring, checkpoint })
        assert.equal(withCheckpoint.ok, false, `a checkpoint naming row ${checkpoint.seq} verified against an empty log: ${JSON.stringify(withCheckpoint)}`)
        assert.deepEqual([withCheckpoint.status === 'broken' && withCheckpoint.problem, withCheckpoint.status === 'broken' && withCheckpoint.first_bad_seq], ['removed', 1])
        assert.match(withCheckpoint.status === 'broken' ? withCheckpoint.message : '', /the log is empty, but the checkpoint .* names row \d+/)
      } finally {
        await ts.drop()
      }
    })

    test('every row and the head deleted under a key: verify must not report ok with guarantee "signed"', async () => {
      const ts = await createTestStore(kind)
      try {
        const keyring = parseAuditKeys(K1, 'test')
        const audit = createAuditLog({ store: ts.store, log: silent, keyring })
        for (let i = 0; i < 5; i++) await audit.record({ actor: reviewer, action: 'POST /v1/plans/{id}/approvals', plan_id: `pln_${i}`, summary: { status: 201 } })
        await sql`delete from audit_events`.execute(ts.store.db)
        await sql`delete from kv where key = 'audit_chain_head'`.execute(ts.store.db)
        const result = await verifyAuditChain(ts.store.db, { keyring })
        assert.ok(!(result.ok && result.guarantee === 'signed'), `a wiped keyed log verifies as ${JSON.stringify(result)}`)
        assert.equal(result.ok && result.guarantee, 'unsigned')
        assert.match(result.ok ? result.statement : '', /only a checkpoint kept outside the store can show that rows were removed/)
      } finally {
        await ts.drop()
      }
    })
  })
}

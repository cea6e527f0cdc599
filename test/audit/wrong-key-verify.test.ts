import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { sql } from 'kysely'
import { createAuditLog, parseAuditKeys, verifyAuditChain, verifyAuditExport, type AuditLog, type VerifyResult } from '../../src/audit/index.js'
import { exportAuditNdjson } from '../../src/audit/export.js'
import type { Actor } from '../../src/contract/index.js'
import { STORE_KINDS, createTestStore, type TestStore } from '../support/stores.js'

const K1 = `k1 ${'a1'.repeat(32)}`
/** what a lost key file written anew holds: the chain's key id, another secret */
const K1_OTHER_SECRET = `k1 ${'c3'.repeat(32)}`
const K2 = `k2 ${'b2'.repeat(32)}`
const reviewer: Actor = { principal: 'prn_rev', name: 'rev', role: 'reviewer', scopes: { resources: '*', actions: '*' }, surface: 'http' }

async function seed(audit: AuditLog, n: number): Promise<void> {
  for (let i = 0; i < n; i++) await audit.record({ actor: reviewer, action: 'POST /v1/plans/{id}/approvals', plan_id: `plan_${i}`, summary: { i } })
  await audit.flush()
}

function problem(result: VerifyResult): { problem: string; message: string } {
  assert.equal(result.ok, false, 'verify should fail')
  return result.status !== 'broken' ? { problem: '', message: '' } : { problem: result.problem, message: result.message }
}

/**
 * Verifying a signed chain with the wrong key (the key file written anew, or another secret typed under the chain's key
 * id) said "row 1 does not match its hash: a column was changed after it was written": an accusation of tampering the
 * verifier cannot make, since nothing signed with that id verifies with the key it holds. It is `unverifiable`, naming
 * the key and both explanations; a row altered under the right key is still `altered`.
 */
for (const kind of STORE_KINDS) {
  describe(`verify with the wrong key of the chain's id (${kind})`, () => {
    let ts: TestStore
    before(async () => {
      ts = await createTestStore(kind)
      await seed(createAuditLog({ store: ts.store, keyring: parseAuditKeys(K1, 'test') }), 5)
    })
    after(() => ts?.drop())

    test('the store: unverifiable, naming the key, never "a column was changed"', async () => {
      const found = problem(await verifyAuditChain(ts.store.db, { keyring: parseAuditKeys(K1_OTHER_SECRET, 'wrong') }))
      assert.equal(found.problem, 'unverifiable', found.message)
      assert.match(found.message, /"k1"/)
      assert.match(found.message, /not the key that signed/)
      assert.doesNotMatch(found.message, /a column was changed/)
    })

    test('an export: unverifiable too', async () => {
      const { result } = await verifyAuditExport(exportAuditNdjson(ts.store.db), 'audit.ndjson', { keyring: parseAuditKeys(K1_OTHER_SECRET, 'wrong') })
      const found = problem(result)
      assert.equal(found.problem, 'unverifiable', found.message)
      assert.match(found.message, /not the key that signed/)
    })

    test('a retired key typed wrong after a rotation: unverifiable where its rows are', async () => {
      const rotated = await createTestStore(kind)
      try {
        await seed(createAuditLog({ store: rotated.store, keyring: parseAuditKeys(K1, 'test') }), 3)
        await seed(createAuditLog({ store: rotated.store, keyring: parseAuditKeys(`${K2}\n${K1}`, 'test') }), 2)
        assert.equal((await verifyAuditChain(rotated.store.db, { keyring: parseAuditKeys(`${K2}\n${K1}`, 'right') })).ok, true)
        const found = problem(await verifyAuditChain(rotated.store.db, { keyring: parseAuditKeys(`${K2}\n${K1_OTHER_SECRET}`, 'wrong') }))
        assert.equal(found.problem, 'unverifiable', found.message)
      } finally {
        await rotated.drop()
      }
    })

    test('with the right key an altered row is still altered (first row, middle row)', async () => {
      const keyring = parseAuditKeys(K1, 'right')
      for (const seq of [1, 3]) {
        const before = await ts.store.db.selectFrom('audit_events').select('summary').where('seq', '=', seq).executeTakeFirstOrThrow()
        await sql`update audit_events set summary = '{"i":99}' where seq = ${seq}`.execute(ts.store.db)
        try {
          const found = problem(await verifyAuditChain(ts.store.db, { keyring }))
          assert.equal(found.problem, 'altered', found.message)
        } finally {
          await sql`update audit_events set summary = ${before.summary} where seq = ${seq}`.execute(ts.store.db)
        }
      }
      assert.equal((await verifyAuditChain(ts.store.db, { keyring })).ok, true)
    })
  })
}

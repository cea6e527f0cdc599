import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { CHAIN_HEAD_KEY, createAuditLog, parseAuditKeys, verifyAuditChain, type AuditKeyring } from '../../src/audit/index.js'
import { STORE_KINDS, createTestStore } from '../support/stores.js'
import { K1, operator, silent } from '../support/tampered-chain.js'

/**
 * A chain head overwritten with something that does not read as one (not JSON, a seq written as text) was read as no
 * head: verify said "the chain head is missing", which sent an operator looking for a deleted row that is there; and
 * with every row deleted too, it answered `ok`, "the log is empty", though a head stored says rows were written. A
 * head stored but unreadable is said as such, quoted, and never verifies.
 */
for (const kind of STORE_KINDS)
  describe(`an unreadable chain head (${kind})`, () => {
    for (const keyring of [parseAuditKeys(K1, 'test'), null] as (AuditKeyring | null)[])
      test(`is named unreadable, never missing, never ok (${keyring ? 'signed' : 'unsigned'} chain)`, async () => {
        const ts = await createTestStore(kind)
        try {
          const audit = createAuditLog({ store: ts.store, log: silent, keyring })
          for (let i = 0; i < 4; i++) await audit.record({ actor: operator, action: 'POST /v1/x', summary: { i } })
          for (const value of ['xx', JSON.stringify({ seq: '4', hash: 'sha256:00' })]) {
            await ts.store.db.updateTable('kv').set({ value }).where('key', '=', CHAIN_HEAD_KEY).execute()
            const result = await verifyAuditChain(ts.store.db, { keyring })
            assert.equal(result.status, 'broken', value)
            if (result.status !== 'broken') return
            assert.equal(result.first_bad_seq, 5)
            assert.match(result.message, /chain head is stored but unreadable/, result.message)
            assert.ok(result.message.includes(JSON.stringify(value)), result.message)
          }
          await ts.store.db.deleteFrom('audit_events').execute()
          const wiped = await verifyAuditChain(ts.store.db, { keyring })
          assert.equal(wiped.ok, false, `a wiped log under an unreadable head: ${JSON.stringify(wiped)}`)
          if (wiped.status === 'broken') assert.match(wiped.message, /stored but unreadable.*the log is empty/)
        } finally {
          await ts.drop()
        }
      })
  })

import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { assertChainKeyConfigured, createAuditLog, parseAuditKeys, verifyAuditChain, type AuditKeyring } from '../../src/audit/index.js'
import type { Actor } from '../../src/contract/index.js'
import type { Store } from '../../src/store/index.js'
import { STORE_KINDS, createTestStore, type TestStore } from '../support/stores.js'
import { insertUnsigned } from '../support/tampered-chain.js'

const K1 = `k1 ${'a1'.repeat(32)}`
const reviewer: Actor = { principal: 'prn_rev', name: 'rev', role: 'reviewer', scopes: { resources: '*', actions: '*' }, surface: 'http' }
const silent = { error: () => undefined }

const rowCount = async (store: Store) => (await store.db.selectFrom('audit_events').select('seq').execute()).length

/**
 * Rows inserted unsigned after the last signed row (by someone without the key) were continued by the next keyed
 * append: it signed on top of them and moved the signed head there, taking the forged rows into the chain as its own
 * past. `unsignedHeadOverSignedRows` looks at the last row alone, and that row was unsigned. A keyed append (and a
 * keyed start) now refuses a chain whose unsigned tip lies over signed rows, naming the last signed row.
 */
for (const kind of STORE_KINDS) {
  describe(`unsigned rows inserted after a signed chain's end (${kind})`, () => {
    const keyring: AuditKeyring = parseAuditKeys(K1, 'test')
    for (const head of ['left', 'moved'] as const) {
      describe(`head ${head}`, () => {
        let ts: TestStore
        before(async () => {
          ts = await createTestStore(kind)
          const audit = createAuditLog({ store: ts.store, keyring, log: silent })
          for (let i = 0; i < 3; i++) await audit.record({ actor: reviewer, action: 'POST /v1/plans/{id}/approvals', plan_id: `plan_${i}`, summary: { i } })
          await insertUnsigned(ts.store, 2, head)
        })
        after(() => ts?.drop())

        test('a keyed append is refused, names the last signed row, and writes nothing', async () => {
          const audit = createAuditLog({ store: ts.store, keyring, log: silent })
          await assert.rejects(audit.record({ actor: reviewer, action: 'GET /v1/audit' }), (error: Error & { code?: string }) => {
            assert.equal(error.code, 'conflict')
            assert.match(error.message, /signed up to row 3, but rows 4\.\.5 are not signed.*warrant audit verify/)
            return true
          })
          audit.recordCall({ source: 'db', method: 'UPDATE', endpoint: 'subscriptions', targetId: 'sub_1', status: 200, outcome: 'written', durationMs: 1 })
          await audit.flush()
          assert.equal(await rowCount(ts.store), 5)
          const result = await verifyAuditChain(ts.store.db, { keyring })
          assert.ok(!result.ok && result.status === 'broken' && result.problem === (head === 'left' ? 'inserted' : 'forged') && result.first_bad_seq === 4, JSON.stringify(result))
        })

        test('a keyed start is refused too', async () => {
          await assert.rejects(assertChainKeyConfigured(ts.store.db, keyring, undefined), /signed up to row 3, but rows 4\.\.5 are not signed.*Refused before anything ran/)
        })
      })
    }
  })
}

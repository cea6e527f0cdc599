import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { assertChainKeyConfigured, createAuditLog, parseAuditKeys, verifyAuditChain, type AuditKeyring } from '../../src/audit/index.js'
import { serverEnvWith, startUntilListening } from '../operations/support/serve-process.js'
import { createCliWorkspace } from '../support/cli-config.js'
import { STORE_KINDS, createTestStore, type TestStore } from '../support/stores.js'
import { K1, alter, lastSeq, operator, rowCount, silent } from '../support/tampered-chain.js'


/**
 * The last row of a signed chain altered in the store: `serve` refused to start, but only because it checked the last
 * row. Any append (the `cli:audit verify` row of the verify that had just reported it, a call row of a running
 * instance) chained a good row onto it, and from then on every start went ahead, the break visible to verify only.
 * An append now checks the row it continues from and refuses (nothing written) when that row does not match its
 * hash; an acknowledgement of an earlier break is refused until the altered end is acknowledged first.
 */
for (const kind of STORE_KINDS) {
  describe(`a signed chain whose last row was altered (${kind})`, () => {
    const keyring: AuditKeyring = parseAuditKeys(K1, 'test')
    let ts: TestStore
    before(async () => {
      ts = await createTestStore(kind)
      const audit = createAuditLog({ store: ts.store, keyring, log: silent })
      for (let i = 0; i < 6; i++) await audit.record({ actor: operator, action: 'POST /v1/plans/{id}/approvals', plan_id: `plan_${i}`, summary: { i } })
      await alter(ts.store, 6, '{"i":"forged"}')
    })
    after(() => ts?.drop())

    test('an append is refused, writes nothing; start still refuses and verify still names the row', async () => {
      const audit = createAuditLog({ store: ts.store, keyring, log: silent })
      await assert.rejects(audit.record({ actor: operator, action: 'GET /v1/audit' }), (error: Error & { code?: string }) => {
        assert.equal(error.code, 'conflict')
        assert.match(error.message, /row 6 .*does not match its hash.*warrant audit acknowledge --at 6/)
        return true
      })
      audit.recordCall({ source: 'db', method: 'UPDATE', endpoint: 'subscriptions', targetId: 'sub_1', status: 200, outcome: 'written', durationMs: 1 })
      await audit.flush()
      assert.equal(await rowCount(ts.store), 6)
      await assert.rejects(assertChainKeyConfigured(ts.store.db, keyring, undefined), /row 6's hash does not verify/)
      const result = await verifyAuditChain(ts.store.db, { keyring })
      assert.deepEqual(result.status === 'broken' && [result.first_bad_seq, result.problem], [6, 'altered'])
    })

    test('an earlier break is acknowledged only after the altered end; then appends go on', async () => {
      const audit = createAuditLog({ store: ts.store, keyring, log: silent })
      await alter(ts.store, 2, '{"i":"earlier"}')
      await assert.rejects(audit.acknowledge({ at: 2, reason: 'INC-1', actor: operator }), /the chain's end is broken too \(seq 6, altered.*acknowledge the end first \(--at 6\)/)
      assert.equal(await rowCount(ts.store), 6)
      await audit.acknowledge({ at: 6, reason: 'INC-2: summary edited', actor: operator })
      await audit.acknowledge({ at: 2, reason: 'INC-1: summary edited', actor: operator })
      await assertChainKeyConfigured(ts.store.db, keyring, undefined)
      await audit.record({ actor: operator, action: 'GET /v1/audit' })
      assert.equal(await lastSeq(ts.store), 9)
      const result = await verifyAuditChain(ts.store.db, { keyring })
      assert.equal(result.status, 'ok_with_acknowledged_breaks', JSON.stringify(result))
    })
  })
}

describe('`warrant audit verify` then `warrant serve` over an altered last row (real processes, sqlite)', () => {
  let ws: Awaited<ReturnType<typeof createCliWorkspace>>
  before(async () => {
    ws = await createCliWorkspace({ count: 3 })
  })
  after(() => ws?.drop())

  test("verify's own row does not lift serve's refusal", { timeout: 120_000 }, async () => {
    for (const name of ['a', 'b']) assert.equal((await ws.warrant(['token', 'create', '--role', 'agent', '--name', name])).code, 0)
    const last = await ws.withStore(lastSeq)
    await ws.withStore((store) => alter(store, last, '{"edited":true}'))
    const verify = await ws.warrant(['audit', 'verify'])
    assert.equal(verify.code, 3, verify.stdout + verify.stderr)
    assert.equal(await ws.withStore(lastSeq), last, "verify's own row was not chained onto the altered row")
    const refused = await startUntilListening(['serve', '--config', ws.configPath, '--port', '0'], ws.dir, serverEnvWith({}))
    assert.equal(refused.listened, false, `serve started over the altered row ${last}:\n${refused.stdout}\n${refused.stderr}`)
  })
})

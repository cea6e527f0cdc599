import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { sql } from 'kysely'
import { CHAIN_HEAD_KEY, assertChainKeyConfigured, createAuditLog, parseAuditKeys, verifyAuditChain, type AuditKeyring } from '../../src/audit/index.js'
import type { Actor } from '../../src/contract/index.js'
import type { Store } from '../../src/store/index.js'
import { createCliWorkspace } from '../support/cli-config.js'
import { STORE_KINDS, createTestStore, type TestStore } from '../support/stores.js'

const K1 = `k1 ${'a1'.repeat(32)}`
const reviewer: Actor = { principal: 'prn_rev', name: 'rev', role: 'reviewer', scopes: { resources: '*', actions: '*' }, surface: 'http' }
const silent = { error: () => undefined }

const rowCount = async (store: Store) => (await store.db.selectFrom('audit_events').select('seq').execute()).length

/** Rows cut from the end of a signed chain, and the head that would show it removed or replaced without its signature. */
async function cutEnd(store: Store, from: number, head: 'removed' | 'unsigned'): Promise<void> {
  await sql`delete from audit_events where seq >= ${from}`.execute(store.db)
  if (head === 'removed') await store.db.deleteFrom('kv').where('key', '=', CHAIN_HEAD_KEY).execute()
  else {
    const last = await store.db.selectFrom('audit_events').select(['seq', 'hash']).orderBy('seq', 'desc').limit(1).executeTakeFirstOrThrow()
    await store.db.updateTable('kv').set({ value: JSON.stringify({ seq: Number(last.seq), hash: last.hash }) }).where('key', '=', CHAIN_HEAD_KEY).execute()
  }
}

/**
 * On a signed chain, rows cut from the end with the head deleted (or replaced by an unsigned one, which needs no key)
 * were reported by `verify` only until the next append: it continued from the last row left and wrote a new signed
 * head, and from then on the chain verified `ok`, `signed`, the cut erased by Warrant itself. Any append does it, even
 * the `cli:audit verify` row of the verify that had just reported the cut. A signed last row under a missing or
 * unsigned head is now refused by the append (nothing written) and by every start that writes, naming the head.
 */
for (const kind of STORE_KINDS) {
  describe(`a signed chain whose end and head were removed (${kind})`, () => {
    const keyring: AuditKeyring = parseAuditKeys(K1, 'test')
    for (const head of ['removed', 'unsigned'] as const) {
      describe(`head ${head}`, () => {
        let ts: TestStore
        before(async () => {
          ts = await createTestStore(kind)
          const audit = createAuditLog({ store: ts.store, keyring, log: silent })
          for (let i = 0; i < 6; i++) await audit.record({ actor: reviewer, action: 'POST /v1/plans/{id}/approvals', plan_id: `plan_${i}`, summary: { i } })
          await cutEnd(ts.store, 5, head)
        })
        after(() => ts?.drop())

        test('an append is refused, writes nothing, and verify still reports the cut', async () => {
          const audit = createAuditLog({ store: ts.store, keyring, log: silent })
          await assert.rejects(audit.record({ actor: reviewer, action: 'GET /v1/audit' }), (error: Error & { code?: string }) => {
            assert.equal(error.code, 'conflict')
            assert.match(error.message, /head .*(missing|not signed)/)
            return true
          })
          audit.recordCall({ source: 'db', method: 'UPDATE', endpoint: 'subscriptions', targetId: 'sub_1', status: 200, outcome: 'written', durationMs: 1 })
          await audit.flush()
          assert.equal(await rowCount(ts.store), 4)
          const result = await verifyAuditChain(ts.store.db, { keyring })
          assert.equal(result.ok, false)
        })

        test('serve and writing commands refuse to start, naming the head', async () => {
          await assert.rejects(assertChainKeyConfigured(ts.store.db, keyring, undefined), /head .*(missing|not signed).*warrant audit verify/)
        })
      })
    }
  })
}

describe('`warrant audit verify` run twice over a cut end and a removed head (real processes, sqlite)', () => {
  let ws: Awaited<ReturnType<typeof createCliWorkspace>>
  before(async () => {
    ws = await createCliWorkspace({ count: 3 })
  })
  after(() => ws?.drop())

  test('both runs exit 3: the first run\'s own row does not seal the cut', { timeout: 120_000 }, async () => {
    for (const name of ['a', 'b', 'c']) assert.equal((await ws.warrant(['token', 'create', '--role', 'agent', '--name', name])).code, 0)
    const rows = await ws.withStore(rowCount)
    assert.ok(rows >= 3)
    await ws.withStore((store) => cutEnd(store, rows, 'removed'))
    const first = await ws.warrant(['audit', 'verify'])
    assert.equal(first.code, 3, `${first.stdout}\n${first.stderr}`)
    const second = await ws.warrant(['audit', 'verify'])
    assert.equal(second.code, 3, `the cut was sealed by the first verify's own row:\n${second.stdout}\n${second.stderr}`)
  })
})

import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { CHAIN_HEAD_KEY, createAuditLog, parseAuditKeys, verifyAuditChain, verifyAuditExport, type AuditLog } from '../../src/audit/index.js'
import { STORE_KINDS, createTestStore, type TestStore } from '../support/stores.js'
import { K1, operator, silent } from '../support/tampered-chain.js'

const keyring = parseAuditKeys(K1, 'test')

/**
 * `warrant audit export` read the chain head first and wrote the rows up to it, so that rows appended meanwhile
 * would not run past the head the file states. Rows past the head that no append wrote were left out the same way: a
 * head put back to an older signed value (read from the store earlier; no key needed) left rows 4..5 `inserted` in the
 * store's own verify, while its export, missing them, verified intact. Rows past an unmoved head are exported, and the
 * export's verification names them as the store's does.
 */
for (const kind of STORE_KINDS) {
  describe(`an export of a store whose head was put back to an older signed head (${kind})`, () => {
    let ts: TestStore
    let audit: AuditLog
    before(async () => {
      ts = await createTestStore(kind)
      audit = createAuditLog({ store: ts.store, keyring, log: silent })
      let older: string | undefined
      for (let i = 0; i < 5; i++) {
        await audit.record({ actor: operator, action: 'POST /v1/plans/{id}/approvals', plan_id: `plan_${i}`, summary: { i } })
        if (i === 2) older = (await ts.store.db.selectFrom('kv').select('value').where('key', '=', CHAIN_HEAD_KEY).executeTakeFirstOrThrow()).value
      }
      await ts.store.db.updateTable('kv').set({ value: older! }).where('key', '=', CHAIN_HEAD_KEY).execute()
    })
    after(() => ts?.drop())

    test("the store's verify names row 4 inserted, and so does its export's", async () => {
      const store = await verifyAuditChain(ts.store.db, { keyring })
      assert.equal(store.status === 'broken' && `${store.first_bad_seq} ${store.problem}`, '4 inserted', JSON.stringify(store))

      const lines: string[] = []
      for await (const line of audit.exportNdjson()) lines.push(line.slice(0, -1))
      assert.deepEqual(
        lines.slice(0, -1).map((l) => (JSON.parse(l) as { seq: number }).seq),
        [1, 2, 3, 4, 5],
      )
      const { result } = await verifyAuditExport(
        (async function* () {
          yield* lines
        })(),
        'audit.ndjson',
        { keyring },
      )
      assert.equal(result.status === 'broken' && `${result.first_bad_seq} ${result.problem}`, '4 inserted', JSON.stringify(result))
    })
  })
}

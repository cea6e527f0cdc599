import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { CHAIN_HEAD_KEY, createAuditLog, parseAuditKeys } from '../../src/audit/index.js'
import type { Actor } from '../../src/contract/index.js'
import type { Store } from '../../src/store/index.js'
import { createCliWorkspaceOn } from '../support/cli-config.js'
import { STORE_KINDS } from '../support/stores.js'
import { insertUnsigned } from '../support/tampered-chain.js'

const K1 = `k1 ${'a1'.repeat(32)}`
const reviewer: Actor = { principal: 'prn_rev', name: 'rev', role: 'reviewer', scopes: { resources: '*', actions: '*' }, surface: 'http' }
const silent = { error: () => undefined }

const chainEnd = async (store: Store) => {
  const rows = await store.db.selectFrom('audit_events').select(['seq', 'hash']).orderBy('seq', 'asc').execute()
  const head = await store.db.selectFrom('kv').select('value').where('key', '=', CHAIN_HEAD_KEY).executeTakeFirst()
  return { rows: rows.map((r) => `${r.seq}:${r.hash}`), head: head?.value ?? null }
}

/**
 * A process without the audit key was refused on a signed chain only by the chain's tip: with unsigned rows forged
 * after the last signed one (no key needed), the tip is unsigned, and the keyless process appended on top, extending
 * the forged rows. verify reported them, and every keyless command kept writing past them. A keyless append, and a
 * keyless start of a writing command, now refuse a chain with any signed row below its unsigned tip, naming the key
 * setting and `warrant audit verify`.
 */
for (const kind of STORE_KINDS) {
  describe(`a keyless process over unsigned rows forged onto a signed chain (${kind})`, () => {
    test('a writing command refuses to start, a reading command writes no row, and nothing is appended', { timeout: 120_000 }, async () => {
      const ws = await createCliWorkspaceOn(kind, { count: 5, edit: (raw) => void delete raw.audit })
      try {
        const keyed = await ws.warrantWith(['token', 'create', '--role', 'reviewer', '--name', 'rev'], { WARRANT_AUDIT_KEY: K1 })
        assert.equal(keyed.code, 0, keyed.stderr)
        const lastSigned = await ws.withStore((store) => insertUnsigned(store, 2, 'moved'))
        const before = await ws.withStore(chainEnd)
        const tokens = await ws.withStore(async (store) => (await store.db.selectFrom('tokens').select('id').execute()).length)

        const write = await ws.warrantWith(['token', 'create', '--role', 'agent', '--name', 'bot'], { WARRANT_AUDIT_KEY: undefined })
        assert.equal(write.code, 2, `${write.stdout}\n${write.stderr}`)
        assert.match(write.stderr, new RegExp(`signed up to row ${lastSigned}, but rows ${lastSigned + 1}\\.\\.${lastSigned + 2} are not signed`))
        for (const named of [/WARRANT_AUDIT_KEY/, /audit\.key/, /warrant audit verify/]) assert.match(write.stderr, named)
        assert.match(write.stderr, /Refused before anything ran/)

        const verify = await ws.warrantWith(['audit', 'verify'], { WARRANT_AUDIT_KEY: undefined })
        assert.equal(verify.code, 3, `${verify.stdout}\n${verify.stderr}`)
        assert.match(verify.stderr, new RegExp(`audit row of this command could not be written: .*signed up to row ${lastSigned}.*WARRANT_AUDIT_KEY`))

        assert.deepEqual(await ws.withStore(chainEnd), before, 'no row appended, the head unmoved')
        assert.equal(await ws.withStore(async (store) => (await store.db.selectFrom('tokens').select('id').execute()).length), tokens, 'no token created')
      } finally {
        await ws.drop()
      }
    })

    test('a keyless process that appended while the chain was unsigned is refused once it was signed and forged over', { timeout: 120_000 }, async () => {
      const ws = await createCliWorkspaceOn(kind, { count: 5, edit: (raw) => void delete raw.audit })
      try {
        const first = await ws.warrantWith(['token', 'create', '--role', 'reviewer', '--name', 'rev'], { WARRANT_AUDIT_KEY: undefined })
        assert.equal(first.code, 0, first.stderr)
        await ws.withStore(async (store) => {
          const keyless = createAuditLog({ store, log: silent })
          // unsigned chain: the keyless process appends (and has seen the chain unsigned up to here)
          await keyless.record({ actor: reviewer, action: 'GET /v1/audit', summary: {} })
          const keyed = createAuditLog({ store, log: silent, keyring: parseAuditKeys(K1, 'test') })
          for (let i = 0; i < 2; i++) await keyed.record({ actor: reviewer, action: 'POST /v1/plans/{id}/approvals', summary: { i } })
          const lastSigned = await insertUnsigned(store, 1, 'moved')
          const before = await chainEnd(store)
          await assert.rejects(keyless.record({ actor: reviewer, action: 'GET /v1/audit', summary: {} }), (error: Error & { code?: string }) => {
            assert.equal(error.code, 'conflict')
            assert.match(error.message, new RegExp(`signed up to row ${lastSigned}, but row ${lastSigned + 1} is not signed.*audit\\.key.*WARRANT_AUDIT_KEY.*warrant audit verify`))
            return true
          })
          assert.deepEqual(await chainEnd(store), before)
        })
      } finally {
        await ws.drop()
      }
    })
  })
}

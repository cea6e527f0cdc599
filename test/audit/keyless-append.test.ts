import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { createAuditLog, parseAuditKeys, verifyAuditChain } from '../../src/audit/index.js'
import type { Actor } from '../../src/contract/index.js'
import { createStore } from '../../src/store/index.js'
import { createCliWorkspace, runWarrant } from '../support/cli-config.js'
import { STORE_KINDS, createTestStore } from '../support/stores.js'

const K1 = `k1 ${'a1'.repeat(32)}`
const reviewer: Actor = { principal: 'prn_rev', name: 'rev', role: 'reviewer', scopes: { resources: '*', actions: '*' }, surface: 'http' }

/**
 * A process without the audit key appending to a signed chain (an operator's `warrant audit verify` from a shell
 * without WARRANT_AUDIT_KEY, a second instance started without it) wrote an unsigned row and an unsigned head after
 * the signed rows: the chain was broken for good, and every later verify blamed a forger (`forged`, "written by
 * someone without the audit key") for a row Warrant wrote itself. The append is refused instead, naming the key.
 */
for (const kind of STORE_KINDS) {
  describe(`an append without the key to a signed chain (${kind})`, () => {
    test('is refused naming the key, and the signed chain still verifies', async () => {
      const ts = await createTestStore(kind)
      try {
        const keyring = parseAuditKeys(K1, 'test')
        const keyed = createAuditLog({ store: ts.store, log: { error: () => undefined }, keyring })
        for (let i = 0; i < 3; i++) await keyed.record({ actor: reviewer, action: 'POST /v1/plans/{id}/approvals', plan_id: `pln_${i}`, summary: { status: 201 } })

        const second = await createStore({ url: ts.url })
        const logged: string[] = []
        try {
          const keyless = createAuditLog({ store: second, log: { error: (_fields, message) => void logged.push(message) } })
          await assert.rejects(keyless.record({ actor: reviewer, action: 'cli:audit verify', summary: {} }), (error: Error & { code?: string }) => {
            assert.equal(error.code, 'conflict')
            assert.match(error.message, /signed with audit key "k1".*no audit key is configured/)
            return true
          })
          keyless.recordCall({ source: 'db', method: 'UPDATE', endpoint: 'subscriptions', status: null, outcome: 'written', durationMs: 1 })
          await keyless.flush()
          assert.equal(logged.length, 1, 'a call row refused is reported, never dropped silently')
        } finally {
          await second.close()
        }

        const result = await verifyAuditChain(ts.store.db, { keyring })
        assert.ok(result.ok && result.rows === 3 && result.guarantee === 'signed', JSON.stringify(result))
        await keyed.record({ actor: reviewer, action: 'POST /v1/plans/{id}/approvals', summary: {} })
        const later = await verifyAuditChain(ts.store.db, { keyring })
        assert.ok(later.ok && later.rows === 4 && later.guarantee === 'signed', JSON.stringify(later))
      } finally {
        await ts.drop()
      }
    })
  })
}

describe('`warrant audit verify` run without the key the server signs with (real process, sqlite)', () => {
  test('says the row is unverifiable, writes nothing unsigned, and says its own row could not be written', async () => {
    const server = await createCliWorkspace({ count: 5, edit: (raw) => void (raw.audit = { key: { env: 'PROBE_SERVER_AUDIT_KEY' } }) })
    const operator = await createCliWorkspace({ count: 5, edit: (raw) => void delete raw.audit })
    try {
      const storeFile = join(server.dir, 'warrant.db')
      const store = await createStore({ url: `sqlite:${storeFile}` })
      try {
        assert.equal((await store.migrate()).error, undefined)
        const keyring = parseAuditKeys(K1, 'test')
        const audit = createAuditLog({ store, keyring })
        for (let i = 0; i < 3; i++) await audit.record({ actor: reviewer, action: 'POST /v1/plans/{id}/approvals', summary: { i } })

        const config = JSON.parse(readFileSync(operator.configPath, 'utf8')) as Record<string, unknown>
        config.store = { url: `sqlite:${storeFile}` }
        writeFileSync(operator.configPath, JSON.stringify(config))
        const verify = await runWarrant(['audit', 'verify', '--config', operator.configPath], operator.dir)
        assert.equal(verify.code, 3, verify.stderr)
        assert.match(verify.stdout, /BROKEN at seq 1 \(unverifiable\)/)
        assert.match(verify.stderr, /audit row of this command could not be written: .*no audit key is configured/)

        const result = await verifyAuditChain(store.db, { keyring })
        assert.ok(result.ok && result.rows === 3 && result.guarantee === 'signed', JSON.stringify(result))
      } finally {
        await store.close()
      }
    } finally {
      await server.drop()
      await operator.drop()
    }
  })
})

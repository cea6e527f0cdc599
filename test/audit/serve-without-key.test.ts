import assert from 'node:assert/strict'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { createAuditLog, parseAuditKeys, verifyAuditChain } from '../../src/audit/index.js'
import type { Actor } from '../../src/contract/index.js'
import { createStore } from '../../src/store/index.js'
import { serverEnvWith, startUntilListening } from '../operations/support/serve-process.js'
import { createCliWorkspace } from '../support/cli-config.js'

const K1 = `k1 ${'a1'.repeat(32)}`
const K2 = `k2 ${'b2'.repeat(32)}`
const reviewer: Actor = { principal: 'prn_rev', name: 'rev', role: 'reviewer', scopes: { resources: '*', actions: '*' }, surface: 'http' }

/**
 * `warrant serve` (and `warrant mcp`) started without the audit key on a store whose chain is signed started and
 * listened: every append was then refused (an unsigned row after signed ones would break the chain), so the server
 * answered requests it could not audit. It refuses to start instead (exit 2, a config mistake), naming the variable
 * and the key the chain is signed with; the same for a key configured without the id that signed the chain's end.
 */
describe('serve / mcp on a signed audit chain without its key (real processes, sqlite)', () => {
  test('refuse to start, naming WARRANT_AUDIT_KEY and the signing key; with the key, serve starts', { timeout: 240_000 }, async () => {
    const ws = await createCliWorkspace({ count: 5, edit: (raw) => void delete raw.audit })
    try {
      const store = await createStore({ url: `sqlite:${join(ws.dir, 'warrant.db')}` })
      const keyring = parseAuditKeys(K1, 'test')
      try {
        assert.equal((await store.migrate()).error, undefined)
        const audit = createAuditLog({ store, keyring })
        for (let i = 0; i < 3; i++) await audit.record({ actor: reviewer, action: 'POST /v1/plans/{id}/approvals', summary: { i } })
      } finally {
        await store.close()
      }

      const serveArgs = ['serve', '--config', ws.configPath, '--port', '0']
      const keyless = await startUntilListening(serveArgs, ws.dir, serverEnvWith({}))
      assert.equal(keyless.listened, false, `serve started without the key:\n${keyless.stdout}`)
      assert.equal(keyless.code, 2, `${keyless.stdout}\n${keyless.stderr}`)
      assert.match(keyless.stderr, /audit chain is signed with audit key "k1"/)
      assert.match(keyless.stderr, /WARRANT_AUDIT_KEY/)

      const mcp = await startUntilListening(['mcp', '--config', ws.configPath], ws.dir, serverEnvWith({ WARRANT_TOKEN: 'wrt_not_checked_before_the_refusal' }))
      assert.equal(mcp.listened, false, mcp.stderr)
      assert.equal(mcp.code, 2, mcp.stderr)
      assert.match(mcp.stderr, /audit chain is signed with audit key "k1".*WARRANT_AUDIT_KEY/)

      const wrongKey = await startUntilListening(serveArgs, ws.dir, serverEnvWith({ WARRANT_AUDIT_KEY: K2 }))
      assert.equal(wrongKey.listened, false, `serve started with a key lacking k1:\n${wrongKey.stdout}`)
      assert.equal(wrongKey.code, 2, wrongKey.stderr)
      assert.match(wrongKey.stderr, /signed with audit key "k1".*configured audit key \(WARRANT_AUDIT_KEY\) holds k2/)

      // nothing was appended by the refused starts
      const after = await createStore({ url: `sqlite:${join(ws.dir, 'warrant.db')}` })
      try {
        const result = await verifyAuditChain(after.db, { keyring })
        assert.ok(result.ok && result.rows === 3 && result.guarantee === 'signed', JSON.stringify(result))
      } finally {
        await after.close()
      }

      // a rotated key (new first, the old kept to verify) starts
      const rotated = await startUntilListening(serveArgs, ws.dir, serverEnvWith({ WARRANT_AUDIT_KEY: `${K2}\n${K1}` }))
      assert.equal(rotated.listened, true, rotated.stderr)
    } finally {
      await ws.drop()
    }
  })
})

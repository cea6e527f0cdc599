import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { loadAuditKeyring } from '../../src/audit/index.js'
import { WarrantError } from '../../src/contract/index.js'
import { createCliWorkspace } from '../support/cli-config.js'

/**
 * A config without `audit.key` takes the key from WARRANT_AUDIT_KEY. Set but empty (`WARRANT_AUDIT_KEY=${AUDIT_KEY}` in
 * a compose file or a unit whose own variable is unset, a secret manager that rendered nothing) it was read as no key
 * at all: every command ran and wrote an unsigned chain, without a word, where the operator meant it signed (a value of
 * spaces was refused, "holds no key"). Set and empty is a key that failed to arrive: refused, naming the variable,
 * before anything is written.
 */
describe('WARRANT_AUDIT_KEY set but empty', () => {
  test('loadAuditKeyring refuses it as it refuses whitespace; unset is still no key', () => {
    assert.equal(loadAuditKeyring(undefined, {}), null)
    for (const value of ['', ' ', '\n'])
      assert.throws(
        () => loadAuditKeyring(undefined, { WARRANT_AUDIT_KEY: value }),
        (error: unknown) => error instanceof WarrantError && error.code === 'invalid_request' && /WARRANT_AUDIT_KEY is set but empty/.test(error.message) && /unset it/.test(error.message),
        JSON.stringify(value),
      )
  })

  test('a command refuses before it writes anything, exit 2, naming the variable (real processes, sqlite)', { timeout: 120_000 }, async () => {
    const ws = await createCliWorkspace({ count: 5, edit: (raw) => void delete raw.audit })
    try {
      const created = await ws.warrantWith(['token', 'create', '--role', 'agent', '--name', 'bot'], { WARRANT_AUDIT_KEY: '' })
      assert.equal(created.code, 2, `${created.stdout}\n${created.stderr}`)
      assert.match(created.stderr, /WARRANT_AUDIT_KEY is set but empty/)
      assert.equal(existsSync(join(ws.dir, 'warrant.db')), false, 'nothing was written: not even the store')
      const verify = await ws.warrantWith(['audit', 'verify'], { WARRANT_AUDIT_KEY: '' })
      assert.equal(verify.code, 2, `${verify.stdout}\n${verify.stderr}`)
      assert.match(verify.stderr, /WARRANT_AUDIT_KEY is set but empty/)
      // unset, the chain is unsigned as documented
      const keyless = await ws.warrantWith(['token', 'create', '--role', 'agent', '--name', 'bot'], { WARRANT_AUDIT_KEY: undefined })
      assert.equal(keyless.code, 0, keyless.stderr)
    } finally {
      await ws.drop()
    }
  })
})

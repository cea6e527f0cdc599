import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { createAuditLog, parseAuditKeys, verifyAuditChain } from '../../src/audit/index.js'
import type { Actor } from '../../src/contract/index.js'
import { createStore } from '../../src/store/index.js'
import { stopServe } from '../operations/support/serve-process.js'
import { CLI_ENTRY, TSX_LOADER, createCliWorkspace } from '../support/cli-config.js'

const K1 = `k1 ${'a1'.repeat(32)}`
const K2 = `k2 ${'b2'.repeat(32)}`
const reviewer: Actor = { principal: 'prn_rev', name: 'rev', role: 'reviewer', scopes: { resources: '*', actions: '*' }, surface: 'http' }

/** `warrant ARGS` as a real process: resolves when it exits, or when it says it listens (then it is stopped). */
function start(args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; listened: boolean; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', TSX_LOADER, CLI_ENTRY, ...args], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  let listened = false
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`neither listened nor exited:\n${stdout}\n${stderr}`)), 60_000)
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString()
      if (!listened && /API:\s+http/.test(stdout)) {
        listened = true
        void stopServe(child, 'SIGTERM')
      }
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      resolve({ code, listened, stdout, stderr })
    })
  })
}

function envWith(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, WARRANT_LOG_LEVEL: 'warn', ...extra }
  if (!('WARRANT_AUDIT_KEY' in extra)) delete env.WARRANT_AUDIT_KEY
  return env
}

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
      const keyless = await start(serveArgs, ws.dir, envWith({}))
      assert.equal(keyless.listened, false, `serve started without the key:\n${keyless.stdout}`)
      assert.equal(keyless.code, 2, `${keyless.stdout}\n${keyless.stderr}`)
      assert.match(keyless.stderr, /audit chain is signed with audit key "k1"/)
      assert.match(keyless.stderr, /WARRANT_AUDIT_KEY/)

      const mcp = await start(['mcp', '--config', ws.configPath], ws.dir, envWith({ WARRANT_TOKEN: 'wrt_not_checked_before_the_refusal' }))
      assert.equal(mcp.listened, false, mcp.stderr)
      assert.equal(mcp.code, 2, mcp.stderr)
      assert.match(mcp.stderr, /audit chain is signed with audit key "k1".*WARRANT_AUDIT_KEY/)

      const wrongKey = await start(serveArgs, ws.dir, envWith({ WARRANT_AUDIT_KEY: K2 }))
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
      const rotated = await start(serveArgs, ws.dir, envWith({ WARRANT_AUDIT_KEY: `${K2}\n${K1}` }))
      assert.equal(rotated.listened, true, rotated.stderr)
    } finally {
      await ws.drop()
    }
  })
})

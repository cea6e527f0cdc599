import assert from 'node:assert/strict'
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { CHAIN_HEAD_KEY } from '../../src/audit/index.js'
import { serverEnvWith, startUntilListening } from '../operations/support/serve-process.js'
import { createCliWorkspace } from '../support/cli-config.js'

/** `warrant serve` as a real process from a shell without WARRANT_AUDIT_KEY: how it exited, or that it listened. */
const serve = (configPath: string, cwd: string) => startUntilListening(['serve', '--config', configPath, '--port', '0'], cwd, serverEnvWith({}))

/**
 * With `audit.key: { file, create: true }`, a lost key file was written anew at the next start: a new random secret
 * under a date-based id (kYYYYMMDD), so on the day the chain's key was made, the same id. The process started,
 * signed new rows with the new secret, and `audit verify` later called every older row forged. Now a missing key file
 * is not created for a store whose chain is already signed (the file is named), and a key file holding the chain's
 * key id with another secret is refused at start (serve, and every CLI command that writes): its key does not verify
 * the chain's last row (nor its signed head). No other writer appends with it either (a refusal's own row, a reading
 * command's row): an append checks the signed head against the key of its id.
 */
describe('a lost audit key file, recreated or replaced under the same id (real processes, sqlite)', () => {
  test('not created for a signed chain; a different secret under the same id refused; the right key starts', { timeout: 300_000 }, async () => {
    const ws = await createCliWorkspace({ count: 5 })
    const keyPath = join(ws.dir, 'audit.key')
    const rowCount = () => ws.withStore(async (store) => (await store.db.selectFrom('audit_events').select('seq').execute()).length)
    try {
      // a first write creates the key file and signs the chain with it
      const first = await ws.warrant(['token', 'create', '--role', 'agent', '--name', 'bot'])
      assert.equal(first.code, 0, first.stderr)
      const original = readFileSync(keyPath, 'utf8')
      const id = /^(k\d{8}) /m.exec(original)?.[1]
      assert.ok(id, original)
      const rows = await rowCount()
      assert.ok(rows > 0)

      // the key file is lost: no new one is written, serve and writes are refused, naming the file and the key
      rmSync(keyPath)
      const lost = await serve(ws.configPath, ws.dir)
      assert.equal(lost.listened, false, `serve started without the chain's key:\n${lost.stdout}`)
      assert.equal(lost.code, 2, `${lost.stdout}\n${lost.stderr}`)
      assert.match(lost.stderr, new RegExp(`audit key file \\S*audit\\.key does not exist.*signed with audit key "${id}"`))
      assert.equal(existsSync(keyPath), false, 'no new key file was written')
      const lostWrite = await ws.warrant(['token', 'create', '--role', 'agent', '--name', 'bot2'])
      assert.equal(lostWrite.code, 2, lostWrite.stderr)
      assert.match(lostWrite.stderr, /audit key file \S*audit\.key does not exist/)
      assert.equal(existsSync(keyPath), false, 'no new key file was written')

      // what `create: true` wrote before: another secret under the same id. Refused: it does not verify the chain
      writeFileSync(keyPath, `${id} ${'c3'.repeat(32)}\n`, { mode: 0o600 })
      const replaced = await serve(ws.configPath, ws.dir)
      assert.equal(replaced.listened, false, `serve started with a replaced key:\n${replaced.stdout}`)
      assert.equal(replaced.code, 2, `${replaced.stdout}\n${replaced.stderr}`)
      assert.match(replaced.stderr, new RegExp(`audit key "${id}".*is not the key that signed the store's audit chain up to seq ${rows}`))
      assert.match(replaced.stderr, /warrant audit verify/)
      const replacedWrite = await ws.warrant(['token', 'create', '--role', 'agent', '--name', 'bot3'])
      assert.equal(replacedWrite.code, 2, replacedWrite.stderr)
      assert.match(replacedWrite.stderr, new RegExp(`audit key "${id}".*is not the key that signed`))
      // a reading command still runs, but its own row is not signed with the replaced key (it would break the chain)
      const read = await ws.warrant(['token', 'list'])
      assert.equal(read.code, 0, read.stderr)
      assert.match(read.stderr, new RegExp(`audit row of this command could not be written: .*signed with audit key "${id}", and the configured key of that id does not verify it`))
      assert.equal(await rowCount(), rows, 'the refused starts, the refusals and the read appended nothing')

      // the key restored: serve starts, and the chain verifies
      writeFileSync(keyPath, original, { mode: 0o600 })
      const restored = await serve(ws.configPath, ws.dir)
      assert.equal(restored.listened, true, restored.stderr)
      const verify = await ws.warrant(['audit', 'verify'])
      assert.equal(verify.code, 0, `${verify.stdout}\n${verify.stderr}`)

      // the signed head is checked too: a head whose signature the key does not verify is refused
      await ws.withStore(async (store) => {
        const value = JSON.parse((await store.db.selectFrom('kv').select('value').where('key', '=', CHAIN_HEAD_KEY).executeTakeFirstOrThrow()).value) as { mac: string }
        value.mac = `${value.mac.startsWith('0') ? '1' : '0'}${value.mac.slice(1)}`
        await store.db.updateTable('kv').set({ value: JSON.stringify(value) }).where('key', '=', CHAIN_HEAD_KEY).execute()
      })
      const forgedHead = await serve(ws.configPath, ws.dir)
      assert.equal(forgedHead.listened, false, forgedHead.stdout)
      assert.equal(forgedHead.code, 2, forgedHead.stderr)
      assert.match(forgedHead.stderr, new RegExp(`audit key "${id}".*is not the key that signed .*head`))
    } finally {
      await ws.drop()
    }
  })
})

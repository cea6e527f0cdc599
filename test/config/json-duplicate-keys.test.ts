import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { type CliWorkspace, createCliWorkspace, runWarrant } from '../support/cli-config.js'

/**
 * A YAML config naming a key twice is refused (the parser's "Map keys must be unique"); a JSON config was read by
 * JSON.parse, which keeps the last of the two: `"allowed_actions"` or `"store"` written twice ran the command on
 * whichever came last, silently. A JSON config is refused as the YAML one is, naming the key and where it is.
 */
describe('a JSON config naming a key twice is refused, as a YAML one (real process)', () => {
  let ws: CliWorkspace
  before(async () => {
    ws = await createCliWorkspace({ count: 5 })
  })
  after(async () => {
    await ws?.drop()
  })

  test('store written twice: exit 2 naming the key, nothing run on either store', { timeout: 60_000 }, async () => {
    const text = readFileSync(ws.configPath, 'utf8')
    const twice = text.replace('"store": "sqlite:./warrant.db"', '"store": "sqlite:./other.db",\n  "store": "sqlite:./warrant.db"')
    assert.notEqual(twice, text)
    const path = join(ws.dir, 'twice.json')
    writeFileSync(path, twice)
    const r = await runWarrant(['search', 'subscriptions', '--config', path], ws.dir)
    assert.equal(r.code, 2, `${r.stdout}\n${r.stderr}`)
    assert.equal(r.stdout, '')
    assert.match(r.stderr, /invalid_request: .*twice\.json.*"store".*twice/s, r.stderr)
  })

  test('a nested key written twice names its path', { timeout: 60_000 }, async () => {
    const raw = JSON.parse(readFileSync(ws.configPath, 'utf8')) as Record<string, any>
    const text = JSON.stringify(raw, null, 2).replace('"review_fields": [', '"description": "first",\n      "review_fields": [')
    const path = join(ws.dir, 'nested.json')
    writeFileSync(path, text)
    const r = await runWarrant(['search', 'subscriptions', '--config', path], ws.dir)
    assert.equal(r.code, 2, `${r.stdout}\n${r.stderr}`)
    assert.match(r.stderr, /resources\.subscriptions: "description" is written twice/, r.stderr)
  })
})

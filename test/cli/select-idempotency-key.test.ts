import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { type CliWorkspace, createCliWorkspace } from '../support/cli-config.js'

/**
 * `warrant select --idempotency-key K`: run again with the same key and filter (a script retried after a lost
 * terminal, a CI step re-run), it prints the selection the first run froze and walks nothing; another filter under
 * the key is refused (exit 2, naming the key); a bad key is refused naming the option. Before, the option did not
 * exist, and a re-run froze a second selection of the same records.
 */
describe('warrant select --idempotency-key', () => {
  let ws: CliWorkspace
  before(async () => {
    ws = await createCliWorkspace({ count: 200 })
  })
  after(async () => {
    await ws?.drop()
  })
  const selections = () => ws.withStore(async (store) => Number((await store.db.selectFrom('selections').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n))

  test('the same key and filter: the same selection, said to be handed back; another filter: refused', { timeout: 120_000 }, async () => {
    const args = ['select', 'subscriptions', '-f', 'status=past_due', '-f', 'region=eu', '--quiet']
    const first = await ws.warrant([...args, '--idempotency-key', 'nightly-eu-1', '--json'])
    assert.equal(first.code, 0, first.stderr)
    const made = JSON.parse(first.stdout)
    assert.equal(made.created, true)
    const count = await selections()
    const again = await ws.warrant([...args, '--idempotency-key', 'nightly-eu-1'])
    assert.equal(again.code, 0, again.stderr)
    assert.match(again.stdout, new RegExp(`^COMPLETE: selection ${made.selection_id} `))
    assert.match(again.stdout, /ALREADY CREATED with this idempotency key/)
    const other = await ws.warrant(['select', 'subscriptions', '-f', 'status=past_due', '-f', 'region=us', '--quiet', '--idempotency-key', 'nightly-eu-1'])
    assert.notEqual(other.code, 0)
    assert.match(other.stderr, /idempotency_key_reused/)
    assert.match(other.stderr, /"nightly-eu-1"/)
    const bad = await ws.warrant([...args, '--idempotency-key', 'x'.repeat(256)])
    assert.notEqual(bad.code, 0)
    assert.match(bad.stderr, /--idempotency-key must be 1 to 255/)
    assert.equal(await selections(), count, 'nothing new')
  })
})

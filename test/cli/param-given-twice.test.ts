import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createCliWorkspace } from '../support/cli-config.js'

/**
 * `--param reason=a --param reason=b` was read as its last value: the plan was proposed with reason "b" without a
 * word, a request other than the one written (HTTP refuses a key named twice, and `-f` terms on one field that
 * cannot both hold). `--param __proto__=x` was dropped without a word. Both exit 2 `invalid_request` naming the
 * parameter; no plan is proposed. The same value given twice is the same request, and is taken.
 */
describe('warrant plan: a --param given twice with other values, or named __proto__, is refused (real subprocesses)', () => {
  let ws: Awaited<ReturnType<typeof createCliWorkspace>>
  let selectionId: string
  before(async () => {
    ws = await createCliWorkspace({ count: 300 })
    const selected = await ws.warrant(['select', 'subscriptions', '-f', 'status=past_due', '--json', '-q'])
    assert.equal(selected.code, 0, selected.stderr)
    selectionId = JSON.parse(selected.stdout).selection_id
  })
  after(async () => {
    await ws?.drop()
  })

  test('two values for one parameter exit 2 naming it and both terms; nothing proposed', async () => {
    const r = await ws.warrant(['plan', selectionId, '-a', 'pause_collection', '-p', 'reason=first', '-p', 'reason=second', '--json'])
    assert.equal(r.code, 2, r.stdout)
    assert.equal(r.stdout, '')
    assert.match(r.stderr, /invalid_request: --param reason is given twice with different values \("reason=first" and "reason=second"\)/)
    const listed = await ws.warrant(['plan', selectionId, '-a', 'pause_collection', '-p', 'reason=first', '--json'])
    assert.equal(listed.code, 0, listed.stderr)
    // the refused call made no plan: this one is the first, created now
    assert.equal(JSON.parse(listed.stdout).created, true)
  })

  test('the same value twice is the one request; __proto__ exits 2 naming it', async () => {
    const same = await ws.warrant(['plan', selectionId, '-a', 'pause_collection', '-p', 'reason=same', '-p', 'reason=same', '--json'])
    assert.equal(same.code, 0, same.stderr)
    assert.deepEqual(JSON.parse(same.stdout).action.params, { reason: 'same' })
    const proto = await ws.warrant(['plan', selectionId, '-a', 'pause_collection', '-p', 'reason=x', '-p', '__proto__=y', '--json'])
    assert.equal(proto.code, 2, proto.stdout)
    assert.match(proto.stderr, /invalid_request: .*"__proto__" is a reserved name/)
  })
})

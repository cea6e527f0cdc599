import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createCliWorkspace } from '../support/cli-config.js'

/**
 * A selection that froze no record printed its groups as bare labels (`  status: ` and nothing after), and a plan
 * on it a `Changes …:` heading with nothing under it: a reader could not tell "none" from a list that failed to
 * print. Each says none, in words.
 */
describe('warrant select / plan on nothing: empty parts say so (sqlite)', () => {
  let ws: Awaited<ReturnType<typeof createCliWorkspace>>
  before(async () => {
    ws = await createCliWorkspace({ count: 20 })
  })
  after(async () => {
    await ws?.drop()
  })

  test('groups and changes of an empty selection are said to be empty', async () => {
    const selected = await ws.warrant(['select', 'subscriptions', '-f', 'status=no_such_status', '-q'])
    assert.equal(selected.code, 0, selected.stderr)
    assert.match(selected.stdout, /^COMPLETE: selection sel_\S+ froze 0 record\(s\)/)
    assert.doesNotMatch(selected.stdout, /^ {2}\w+: *$/m, 'no label left without a value')
    assert.match(selected.stdout, /^ {2}status: none \(no member\)$/m)
    const id = /selection (sel_\w+)/.exec(selected.stdout)![1]!
    const planned = await ws.warrant(['plan', id, '--action', 'pause_collection', '--param', 'reason=x'])
    assert.equal(planned.code, 0, planned.stderr)
    assert.match(planned.stdout, /^Changes: none \(the plan has no target\)$/m)
  })
})

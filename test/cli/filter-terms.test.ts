import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createCliWorkspace } from '../support/cli-config.js'

describe('warrant search and select: the filter grammar refuses what it cannot read (real subprocesses)', () => {
  let ws: Awaited<ReturnType<typeof createCliWorkspace>>
  before(async () => {
    ws = await createCliWorkspace({ count: 1200 })
  })
  after(async () => {
    await ws?.drop()
  })

  test('two equalities on one field are refused, never reduced to the last', async () => {
    for (const command of ['search', 'select']) {
      const r = await ws.warrant([command, 'subscriptions', '-f', 'status=past_due', '-f', 'status=active'])
      assert.equal(r.code, 2, `${command}: ${r.stdout}`)
      assert.equal(r.stdout, '')
      assert.match(r.stderr, /invalid_request: filter terms "status=past_due" and "status=active" both constrain status/)
      assert.match(r.stderr, /status=A,B/)
    }
  })

  test('terms on one field with different operators combine: both must hold', async () => {
    const both = JSON.parse((await ws.warrant(['search', 'subscriptions', '-f', 'amount_due>=100', '-f', 'amount_due<300', '--json'])).stdout)
    assert.ok(both.items.length > 0)
    assert.ok(both.items.every((i: any) => i.amount_due >= 100 && i.amount_due < 300))
    const low = JSON.parse((await ws.warrant(['search', 'subscriptions', '-f', 'amount_due<300', '--json'])).stdout)
    assert.ok(low.items.some((i: any) => i.amount_due < 100), 'the second term alone lets more through')
    const none = JSON.parse((await ws.warrant(['search', 'subscriptions', '-f', 'status!=past_due', '-f', 'status!=active', '--json'])).stdout)
    assert.ok(none.items.length > 0)
    assert.ok(none.items.every((i: any) => i.status !== 'past_due' && i.status !== 'active'))
    const same = await ws.warrant(['search', 'subscriptions', '-f', 'status=past_due', '-f', 'status=past_due', '--json'])
    assert.equal(same.code, 0, same.stderr)
  })

  test('an unknown operator or a malformed term is refused with the grammar', async () => {
    for (const term of ['status==past_due', 'amount_due=>5', 'status', '=past_due', 'status=']) {
      const r = await ws.warrant(['search', 'subscriptions', '--filter', term])
      assert.equal(r.code, 2, `${term}: ${r.stdout}`)
      assert.doesNotMatch(r.stdout, /COMPLETE/, term)
      assert.match(r.stderr, /invalid_request: cannot read filter/, term)
      assert.match(r.stderr, /OP one of: = \(equals/, term)
    }
    const typo = await ws.warrant(['search', 'subscriptions', '--filter', 'status==past_due'])
    assert.match(typo.stderr, /"==" is not an operator/)
  })

  test('search exits 5 on an incomplete result and 0 on a complete one; the absence line only where it decides', async () => {
    const partial = await ws.warrant(['search', 'subscriptions', '-f', 'status=past_due', '--max-pages', '1'])
    assert.equal(partial.code, 5, partial.stderr)
    assert.match(partial.stdout, /^INCOMPLETE/)
    assert.match(partial.stdout, /For a change based on absence: refuse_or_request_review\./)
    const partialJson = await ws.warrant(['search', 'subscriptions', '-f', 'status=past_due', '--max-pages', '1', '--json'])
    assert.equal(partialJson.code, 5)
    assert.equal(JSON.parse(partialJson.stdout).complete, false)

    const whole = await ws.warrant(['search', 'subscriptions', '-f', 'status=past_due'])
    assert.equal(whole.code, 0, whole.stderr)
    assert.match(whole.stdout, /^COMPLETE: \d+/)
    assert.doesNotMatch(whole.stdout, /For a change based on absence/)

    const empty = await ws.warrant(['search', 'subscriptions', '-f', 'status=past_due', '-f', 'amount_due<0'])
    assert.equal(empty.code, 0, empty.stderr)
    assert.match(empty.stdout, /^COMPLETE: 0 /)
    assert.match(empty.stdout, /For a change based on absence: proceed\./)
  })

  // plan on an incomplete selection exited 0, as for a plan that can be approved: `warrant plan … && warrant approve …`
  // read it as done. The plan is reviewable, never approvable or committable: exit 5, as select on it.
  test('select and plan exit 5 on an incomplete selection, and plan says it cannot be approved instead of suggesting approve', async () => {
    const selected = await ws.warrant(['select', 'subscriptions', '-f', 'status=past_due', '--max-pages', '1', '--page-size', '50', '--json'])
    assert.equal(selected.code, 5, selected.stderr)
    const selection = JSON.parse(selected.stdout)
    assert.equal(selection.complete, false)
    const planned = await ws.warrant(['plan', selection.selection_id, '--action', 'pause_collection', '--param', 'reason=x'])
    assert.equal(planned.code, 5, planned.stderr)
    assert.match(planned.stdout, /INCOMPLETE selection sel_\S+: more records may match/)
    assert.match(planned.stdout, /NEVER approved or committed/)
    assert.match(planned.stdout, new RegExp(`warrant recover ${selection.selection_id}`))
    assert.doesNotMatch(planned.stdout, /warrant approve/)
    // the same plan again (as JSON: the data, unchanged) still exits 5
    const again = await ws.warrant(['plan', selection.selection_id, '--action', 'pause_collection', '--param', 'reason=x', '--json'])
    assert.equal(again.code, 5, again.stderr)
    assert.equal(JSON.parse(again.stdout).selection.complete, false)
  })
})

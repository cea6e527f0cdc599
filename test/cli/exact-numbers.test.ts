import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createCliWorkspace } from '../support/cli-config.js'

/**
 * `--param amount=9007199254740993` and `-f amount_due>=9007199254740993` were read with Number(): the plan
 * wrote 9007199254740992 and the filter asked about another bound, both silently. As on HTTP and MCP, a number
 * a double does not hold exactly is refused (exit 2) naming the option; nothing is created.
 */
describe('warrant plan and select: a number a double would round is refused, not rounded (real subprocesses)', () => {
  let ws: Awaited<ReturnType<typeof createCliWorkspace>>
  let selectionId: string
  before(async () => {
    ws = await createCliWorkspace({
      count: 300,
      edit: (raw) => {
        raw.resources.subscriptions.actions.set_amount = { description: 'set the amount due', params: { amount: { type: 'number' } }, set: { amount_due: '{{params.amount}}' } }
      },
    })
    const selected = await ws.warrant(['select', 'subscriptions', '-f', 'status=past_due', '--json', '-q'])
    assert.equal(selected.code, 0, selected.stderr)
    selectionId = JSON.parse(selected.stdout).selection_id
  })
  after(async () => {
    await ws?.drop()
  })

  test('--param with a number past 2^53, too many digits or out of range exits 2 naming it; no plan is proposed', async () => {
    for (const value of ['9007199254740993', '0.12345678901234567890', '1e400']) {
      const r = await ws.warrant(['plan', selectionId, '-a', 'set_amount', '-p', `amount=${value}`, '--json'])
      assert.equal(r.code, 2, `${value}: ${r.stdout}`)
      assert.equal(r.stdout, '')
      assert.match(r.stderr, new RegExp(`invalid_request: --param amount: "${value.replace(/\./g, '\\.')}" is not a number a double holds exactly`), r.stderr)
    }
    const exact = await ws.warrant(['plan', selectionId, '-a', 'set_amount', '-p', 'amount=9007199254740992', '--json'])
    assert.equal(exact.code, 0, exact.stderr)
    assert.equal(JSON.parse(exact.stdout).changes.summary.find((s: any) => s.field === 'amount_due').after, 9007199254740992)
  })

  test('a filter bound a double would round exits 2 on search and select', async () => {
    for (const command of ['search', 'select']) {
      const r = await ws.warrant([command, 'subscriptions', '-f', 'amount_due>=9007199254740993'])
      assert.equal(r.code, 2, `${command}: ${r.stdout}`)
      assert.match(r.stderr, /invalid_request: cannot read filter "amount_due>=9007199254740993": "9007199254740993" is not a number a double holds exactly/)
    }
  })
})

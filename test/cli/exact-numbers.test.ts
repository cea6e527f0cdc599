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

  test('--param spelled other than in decimal digits (0x10, Infinity, NaN, 1_000) exits 2 naming it; -0 is zero', async () => {
    // Number() read "0x10" as 16 and "0b11" as 3 without a word; "Infinity" failed later as "Invalid input"
    const refusals: [string, RegExp][] = [
      ['0x10', /is not a decimal number: write digits/],
      ['0b11', /is not a decimal number: write digits/],
      ['Infinity', /is not a decimal number: write digits/],
      ['-Infinity', /is not a decimal number: write digits/],
      ['NaN', /is not a decimal number: write digits/],
      ['1_000', /is not a decimal number: write digits/],
      ['1e400', /is not a number a double holds exactly \(it would be read as Infinity\); it is out of a double's range/],
      ['1e-400', /is not a number a double holds exactly \(it would be read as 0\); it is out of a double's range/],
    ]
    for (const [value, message] of refusals) {
      const r = await ws.warrant(['plan', selectionId, '-a', 'set_amount', '-p', `amount=${value}`, '--json'])
      assert.equal(r.code, 2, `${value}: ${r.stdout}`)
      assert.equal(r.stdout, '')
      assert.match(r.stderr, new RegExp(`invalid_request: --param amount: "${value}" ${message.source}`), r.stderr)
    }
    const zero = await ws.warrant(['plan', selectionId, '-a', 'set_amount', '-p', 'amount=-0', '--json'])
    assert.equal(zero.code, 0, zero.stderr)
    const plain = await ws.warrant(['plan', selectionId, '-a', 'set_amount', '-p', 'amount=0', '--json'])
    // one zero: the same plan (same digest) as amount=0
    assert.equal(JSON.parse(zero.stdout).plan_digest, JSON.parse(plain.stdout).plan_digest)
  })

  test('a filter bound spelled other than in decimal digits exits 2 on search and select', async () => {
    for (const command of ['search', 'select'])
      for (const bound of ['0x10', 'Infinity', '1e-400']) {
        const r = await ws.warrant([command, 'subscriptions', '-f', `amount_due>${bound}`])
        assert.equal(r.code, 2, `${command} ${bound}: ${r.stdout}`)
        assert.match(r.stderr, new RegExp(`invalid_request: cannot read filter "amount_due>${bound}": "${bound}" is not a`), r.stderr)
      }
  })

  test('a filter bound a double would round exits 2 on search and select', async () => {
    for (const command of ['search', 'select']) {
      const r = await ws.warrant([command, 'subscriptions', '-f', 'amount_due>=9007199254740993'])
      assert.equal(r.code, 2, `${command}: ${r.stdout}`)
      assert.match(r.stderr, /invalid_request: cannot read filter "amount_due>=9007199254740993": "9007199254740993" is not a number a double holds exactly/)
    }
  })
})

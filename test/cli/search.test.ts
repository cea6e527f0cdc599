import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createCliWorkspace } from '../support/cli-config.js'

describe('warrant search (a real subprocess)', () => {
  let ws: Awaited<ReturnType<typeof createCliWorkspace>>
  before(async () => {
    ws = await createCliWorkspace({ count: 3000 })
  })
  after(async () => {
    await ws?.drop()
  })

  test('prints a complete envelope, completeness first', async () => {
    const text = await ws.warrant(['search', 'subscriptions', '--filter', 'status=past_due'])
    assert.equal(text.code, 0, text.stderr)
    assert.match(text.stdout.split('\n')[0]!, /^COMPLETE: \d+ matching record\(s\) in subscriptions in billing-demo/)
    const json = await ws.warrant(['search', 'subscriptions', '--filter', 'status=past_due', '--json'])
    const envelope = JSON.parse(json.stdout)
    assert.equal(envelope.complete, true)
    assert.ok(envelope.items.length > 0 && envelope.items.every((i: any) => i.status === 'past_due'))
  })

  test('--max-pages 1 prints complete: false with CLIENT_LIMIT_REACHED and a continuation that finishes the walk', async () => {
    const text = await ws.warrant(['search', 'subscriptions', '--filter', 'status=past_due', '--max-pages', '1'])
    assert.equal(text.code, 5, text.stderr)
    assert.match(text.stdout, /^INCOMPLETE: .*complete: false/)
    assert.match(text.stdout, /CLIENT_LIMIT_REACHED \(max_pages=1\)/)
    assert.match(text.stdout, /--cursor \S+/)

    const full = JSON.parse((await ws.warrant(['search', 'subscriptions', '--filter', 'status=past_due', '--json'])).stdout)
    const first = JSON.parse((await ws.warrant(['search', 'subscriptions', '--filter', 'status=past_due', '--max-pages', '1', '--json'])).stdout)
    assert.equal(first.complete, false)
    assert.equal(first.incomplete_reasons[0].code, 'CLIENT_LIMIT_REACHED')
    const rest = JSON.parse((await ws.warrant(['search', 'subscriptions', '--filter', 'status=past_due', '--cursor', first.continuation.cursor, '--json'])).stdout)
    assert.equal(rest.complete, true)
    const ids = [...first.items, ...rest.items].map((i: any) => i.id)
    assert.deepEqual(ids, full.items.map((i: any) => i.id))
  })

  test('a continued walk speaks of the whole walk: what this call returned and what the walk found in total', async () => {
    const full = JSON.parse((await ws.warrant(['search', 'subscriptions', '--filter', 'status=past_due', '--json'])).stdout)
    assert.equal(full.page.walk_returned, undefined, 'a walk in one part has nothing to add')
    const first = JSON.parse((await ws.warrant(['search', 'subscriptions', '--filter', 'status=past_due', '--max-pages', '1', '--page-size', '50', '--json'])).stdout)
    const second = JSON.parse((await ws.warrant(['search', 'subscriptions', '--filter', 'status=past_due', '--max-pages', '1', '--page-size', '50', '--cursor', first.continuation.cursor, '--json'])).stdout)
    assert.deepEqual([second.page.returned, second.page.walk_returned], [50, 100])
    const last = await ws.warrant(['search', 'subscriptions', '--filter', 'status=past_due', '--page-size', '50', '--cursor', second.continuation.cursor])
    assert.equal(last.code, 0, last.stderr)
    const rest = full.items.length - 100
    assert.match(last.stdout, new RegExp(`^COMPLETE: the walk found ${full.items.length} matching record\\(s\\) in subscriptions in billing-demo.* in all its parts \\(${rest} returned by this call, the rest by the earlier ones\\)`))
    const middle = await ws.warrant(['search', 'subscriptions', '--filter', 'status=past_due', '--max-pages', '1', '--page-size', '50', '--cursor', first.continuation.cursor])
    assert.equal(middle.code, 5)
    assert.match(middle.stdout, /^INCOMPLETE: 50 record\(s\) returned by this call, 100 so far by the whole walk/)
  })

  test('bad input exits 2 with the error code and changes nothing', async () => {
    const denied = await ws.warrant(['search', 'subscriptions', '--filter', 'card_token=x'])
    assert.equal(denied.code, 2)
    assert.match(denied.stderr, /denied_field/)
    const unknown = await ws.warrant(['search', 'nope'])
    assert.equal(unknown.code, 2)
    assert.match(unknown.stderr, /not_found: unknown resource "nope"/)
    const budget = await ws.warrant(['search', 'subscriptions', '--max-pages', 'many'])
    assert.equal(budget.code, 2)
    assert.match(budget.stderr, /invalid_request: --max-pages must be a whole number above 0, not "many"/)
    const forged = await ws.warrant(['search', 'subscriptions', '--cursor', 'abc.def'])
    assert.equal(forged.code, 2)
    assert.match(forged.stderr, /invalid_cursor/)
  })
})

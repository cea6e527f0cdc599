import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { reviewPage } from '../support/review-page.js'
import { createSelection, proposePlan } from './support.js'

/**
 * The plan's change summary lists at most 50 distinct values per field. A write whose value differs per record
 * (a template naming the record's id) has one after value per target: the table must say how many records the
 * values it lists leave out, or 50 lines of "(1)" read as the whole effect of a plan on hundreds of records.
 */
describe('review page: a change summary cut at its 50 values says how many records it leaves out', () => {
  let fx: GatewayFixture
  before(async () => {
    fx = await startDemoGateway({
      store: 'sqlite',
      count: 2000,
      edit: (c) => {
        c.resources.subscriptions.actions.note_each = {
          description: 'Pause with a note naming the record',
          params: { reason: { type: 'string', required: true } },
          set: { collection: 'paused', pause_reason: '{{params.reason}} for {{id}}' },
          precondition: { status: 'past_due' },
          reversible: true,
        }
      },
    })
  })
  after(async () => {
    await fx?.close()
  })

  test('the After column of a per-record value names the records its listed values leave out; a uniform one stays as it was', async () => {
    const selection = await createSelection(fx, { filter: { status: 'past_due', region: 'eu' } })
    assert.ok(selection.count > 100, `a set larger than the listed values: ${selection.count}`)
    const plan = await proposePlan(fx, selection.selection_id, { type: 'note_each', params: { reason: 'held' } })
    const listed = plan.changes.summary.find((s: any) => s.field === 'pause_reason').after_values
    assert.equal(listed.length, 50)
    const left = selection.count - 50
    const text = await reviewPage(fx, `/review/plans/${plan.plan_id}`)
    const effect = text.slice(text.indexOf('Before → after for every field that changes'), text.indexOf('Precondition'))
    const row = effect.slice(effect.indexOf('pause_reason'))
    assert.match(row, new RegExp(`and other values \\(${left.toLocaleString('en-US')} records\\)`), row.slice(0, 400))
    // the uniform field lists its one value, nothing left out
    const collection = effect.slice(effect.indexOf('collection'), effect.indexOf('pause_reason'))
    assert.doesNotMatch(collection, /and other values/)
  })
})

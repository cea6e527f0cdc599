import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { openReviewSession } from '../support/review-session.js'
import { createSelection, proposePlan } from './support.js'

/**
 * The plan page pages the manifest (`m`) and each record's change (`c`) by two cursors. A link whose cursors do
 * not pair up (a members cursor the agent read from the API, sent to a reviewer without `c`) showed records 51–100
 * with an empty "Before → after", as if nothing were written to them: each such row must say its change was not read.
 */
describe('review page: a manifest row whose change is not on the page says so, never a blank change', () => {
  let fx: GatewayFixture
  before(async () => {
    fx = await startDemoGateway({ store: 'sqlite', count: 1000 })
  })
  after(async () => {
    await fx?.close()
  })

  test("page 2 of the records opened with the agent's members cursor and no changes cursor", async () => {
    const selection = await createSelection(fx, { filter: { status: 'past_due' } })
    const plan = await proposePlan(fx, selection.selection_id, { type: 'pause_collection', params: { reason: 'r' } })
    const members = await fx.as('agent')('GET', `/v1/selections/${selection.selection_id}/records?limit=50`)
    assert.equal(members.status, 200, JSON.stringify(members.body))
    const cursor = members.body.next_cursor as string
    assert.ok(cursor)
    const session = await openReviewSession(fx.base, fx.tokens.reviewer)
    const page = await session.get(`/review/plans/${plan.plan_id}?m=${encodeURIComponent(cursor)}`)
    assert.equal(page.status, 200)
    const manifest = page.html.slice(page.html.indexOf('data-testid="manifest"'))
    const rows = manifest.slice(0, manifest.indexOf('</tbody>')).split('<tr>').slice(2)
    assert.equal(rows.length, 50)
    for (const row of rows) assert.match(row, /pause_reason|not read with this page/, `a row with neither its change nor a word why: ${row.replace(/<[^>]+>/g, ' ').slice(0, 200)}`)
    // the first page pairs them: every row shows its change
    const first = await session.get(`/review/plans/${plan.plan_id}`)
    assert.doesNotMatch(first.html, /change-not-read/)
  })
})

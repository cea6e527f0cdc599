import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import BetterSqlite3 from 'better-sqlite3'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { pagePart, reviewPageHtml, textOf } from '../support/review-page.js'
import { STORE_KINDS } from '../support/stores.js'
import { compensationWithTwoMoved } from './support/moved-compensation.js'

/**
 * The change summary counts the skipped members apart, but the per-record list (`GET /v1/plans/{id}/changes`, the
 * review page's "Before → after" column) showed `collection: active → paused` for a member failing the precondition as
 * frozen, which would be skipped, not written; for a compensation, `paused → active` for a target someone resumed
 * since. Each record now says whether it would be skipped (`skipped`), and the page says so instead of an arrow.
 */

/** The manifest row of `id` on the page, as text. */
function rowOf(html: string, id: string): string {
  const table = pagePart(html, 'manifest')
  const row = table.split('<tr').find((r) => r.includes(`>${id}<`))
  assert.ok(row, `no manifest row for ${id}`)
  return textOf(`<tr${row}`)
}

for (const kind of STORE_KINDS) {
  describe(`the per-record changes of members that would be skipped (${kind} store)`, () => {
    let fx: GatewayFixture
    let upstream: BetterSqlite3.Database
    before(async () => {
      fx = await startDemoGateway({ store: kind, count: 200 })
      upstream = new BetterSqlite3(fx.upstreamUrl.slice('sqlite:'.length))
    })
    after(async () => {
      upstream?.close()
      await fx?.close()
    })

    test('a member failing the precondition as frozen is marked skipped in /changes and on the page, not shown as a change', async () => {
      const rows = upstream.prepare(`select id, status, collection from subscriptions where region = 'us' order by id`).all() as { id: string; status: string; collection: string }[]
      const failing = new Set(rows.filter((r) => !(r.status === 'past_due' && r.collection === 'active')).map((r) => r.id))
      assert.ok(failing.size > 0 && failing.size < rows.length, `${failing.size} of ${rows.length}`)
      const agent = fx.as('agent')
      const selection = await agent('POST', '/v1/resources/subscriptions/selections', { filter: { region: 'us' } })
      assert.equal(selection.status, 201, JSON.stringify(selection.body))
      const proposed = await agent('POST', `/v1/selections/${selection.body.selection_id}/plans`, { action: { type: 'pause_collection', params: { reason: 'dunning review' } } })
      assert.equal(proposed.status, 201, JSON.stringify(proposed.body))
      assert.equal(proposed.body.precondition.failing_now, failing.size)
      const page = await fx.as('reviewer')('GET', `/v1/plans/${proposed.body.plan_id}/changes?limit=1000`)
      assert.equal(page.status, 200, JSON.stringify(page.body))
      assert.equal(page.body.changes.length, rows.length)
      for (const c of page.body.changes) assert.equal(c.skipped, failing.has(c.id) ? 'fails_precondition' : null, JSON.stringify(c))

      const html = await reviewPageHtml(fx, `/review/plans/${proposed.body.plan_id}?limit=500`)
      const skippedId = [...failing][0]!
      const writtenId = rows.find((r) => !failing.has(r.id))!.id
      const skippedRow = rowOf(html, skippedId)
      assert.match(skippedRow, /would be skipped \(fails the precondition as frozen\): not written/, skippedRow)
      assert.doesNotMatch(skippedRow, /→/, skippedRow)
      const writtenRow = rowOf(html, writtenId)
      assert.match(writtenRow, /collection: active\s*→\s*paused/, writtenRow)
      assert.doesNotMatch(writtenRow, /would be skipped/, writtenRow)
    })

    test('a member frozen without a precondition field is "unknown", not skipped: its change is shown and the page says it may be skipped', async () => {
      const agent = fx.as('agent')
      const selection = await agent('POST', '/v1/resources/subscriptions/selections', { filter: { region: 'us', status: 'past_due', collection: 'active' } })
      assert.equal(selection.status, 201, JSON.stringify(selection.body))
      const proposed = await agent('POST', `/v1/selections/${selection.body.selection_id}/plans`, { action: { type: 'pause_collection', params: { reason: 'unknown case' } } })
      assert.equal(proposed.status, 201, JSON.stringify(proposed.body))
      const db = fx.gateway.store.db
      const member = await db.selectFrom('selection_members').selectAll().where('selection_id', '=', selection.body.selection_id).orderBy('ord').limit(1).executeTakeFirstOrThrow()
      const { status: _dropped, ...fields } = JSON.parse(member.fields) as Record<string, unknown>
      await db.updateTable('selection_members').set({ fields: JSON.stringify(fields) }).where('selection_id', '=', member.selection_id).where('ord', '=', member.ord).execute()
      const page = await fx.as('reviewer')('GET', `/v1/plans/${proposed.body.plan_id}/changes?limit=1000`)
      assert.equal(page.status, 200, JSON.stringify(page.body))
      for (const c of page.body.changes) assert.equal(c.skipped, c.id === member.record_id ? 'unknown' : null, JSON.stringify(c))
      const html = await reviewPageHtml(fx, `/review/plans/${proposed.body.plan_id}?limit=500`)
      const row = rowOf(html, member.record_id)
      assert.match(row, /collection: active\s*→\s*paused/, row)
      assert.match(row, /may be skipped/, row)
      assert.doesNotMatch(row, /would be skipped/, row)
    })

    test('a compensation: a target that no longer holds what the operation wrote is marked skipped, the others not', async () => {
      const reviewer = fx.as('reviewer')
      const { selection, moved, proposed } = await compensationWithTwoMoved(fx, upstream, `pause-rows-${kind}`)
      const page = await reviewer('GET', `/v1/plans/${proposed.body.plan_id}/changes?limit=1000`)
      assert.equal(page.status, 200, JSON.stringify(page.body))
      assert.equal(page.body.changes.length, selection.count)
      for (const c of page.body.changes) assert.equal(c.skipped, moved.includes(c.id) ? 'no_longer_holds_written' : null, JSON.stringify(c))

      const html = await reviewPageHtml(fx, `/review/plans/${proposed.body.plan_id}?limit=500`)
      const skippedRow = rowOf(html, moved[0]!)
      assert.match(skippedRow, /would be skipped \(no longer holds what the operation wrote\): not written/, skippedRow)
      assert.doesNotMatch(skippedRow, /→/, skippedRow)
      const kept = page.body.changes.find((c: any) => !moved.includes(c.id)).id
      assert.match(rowOf(html, kept), /collection: paused\s*→\s*active/)

      // a compensation stored before the moved targets were kept by id: no record is said written for sure
      const stored = await fx.gateway.store.db.selectFrom('plans').select('changes_summary').where('id', '=', proposed.body.plan_id).executeTakeFirstOrThrow()
      const { moved: _kept, ...older } = JSON.parse(stored.changes_summary) as Record<string, unknown>
      const keptIds = _kept as { ids: string[]; complete: boolean }
      assert.deepEqual({ ids: [...keptIds.ids].sort(), complete: keptIds.complete }, { ids: [...moved].sort(), complete: true })
      await fx.gateway.store.db.updateTable('plans').set({ changes_summary: JSON.stringify(older) }).where('id', '=', proposed.body.plan_id).execute()
      const olderPage = await reviewer('GET', `/v1/plans/${proposed.body.plan_id}/changes?limit=1000`)
      assert.ok(olderPage.body.changes.every((c: any) => c.skipped === 'unknown'), JSON.stringify(olderPage.body.changes))
    })
  })
}

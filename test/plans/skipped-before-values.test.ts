import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import BetterSqlite3 from 'better-sqlite3'
import { renderPlan } from '../../src/cli/render-selection.js'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { pagePart, reviewPageHtml, textOf } from '../support/review-page.js'
import { STORE_KINDS } from '../support/stores.js'
import { compensationWithTwoMoved } from './support/moved-compensation.js'

/**
 * A plan's change summary tallied the before-values of every member, the skipped ones too: selecting every `us`
 * subscription and planning `mark_past_due` (set status past_due, precondition status active), the CLI printed
 * `status: "active" (n), "trialing" (n), "past_due" (n), ... → "past_due"; n already hold it`, which read as trialing
 * and canceled subscriptions becoming past_due; they would be skipped. The summary now tallies the written members
 * in `before` (and `unchanged`), the skipped members' values apart in `skipped_before`, and every surface says so.
 */
const counted = (rows: { value: string; count: number }[]) => [...rows].sort((a, b) => b.count - a.count || a.value.localeCompare(b.value))

for (const kind of STORE_KINDS) {
  describe(`a change summary over members that would be skipped (${kind} store)`, () => {
    let fx: GatewayFixture
    let upstream: BetterSqlite3.Database
    before(async () => {
      fx = await startDemoGateway({
        store: kind,
        count: 200,
        edit: (raw) => {
          raw.resources.subscriptions.actions.mark_past_due = { description: 'Mark an active subscription past due', set: { status: 'past_due' }, precondition: { status: 'active' } }
        },
      })
      upstream = new BetterSqlite3(fx.upstreamUrl.slice('sqlite:'.length))
    })
    after(async () => {
      upstream?.close()
      await fx?.close()
    })

    /** The upstream's `us` statuses, counted. */
    const statuses = (where = "region = 'us'") => upstream.prepare(`select status as value, count(*) as count from subscriptions where ${where} group by status`).all() as { value: string; count: number }[]

    test('some members fail the precondition: before lists the written ones, skipped_before the rest; the CLI and the page say so', async () => {
      const all = statuses()
      const active = all.find((s) => s.value === 'active')!.count
      const skippedRows = counted(all.filter((s) => s.value !== 'active'))
      const skipped = skippedRows.reduce((n, s) => n + s.count, 0)
      assert.ok(active > 0 && skipped > 0 && skippedRows.some((s) => s.value === 'past_due'), JSON.stringify(all))
      const agent = fx.as('agent')
      const selection = await agent('POST', '/v1/resources/subscriptions/selections', { filter: { region: 'us' } })
      assert.equal(selection.status, 201, JSON.stringify(selection.body))
      const proposed = await agent('POST', `/v1/selections/${selection.body.selection_id}/plans`, { action: { type: 'mark_past_due' } })
      assert.equal(proposed.status, 201, JSON.stringify(proposed.body))
      const view = await fx.as('reviewer')('GET', `/v1/plans/${proposed.body.plan_id}`)
      assert.equal(view.status, 200)
      assert.equal(view.body.precondition.failing_now, skipped)
      const status = view.body.changes.summary.find((s: any) => s.field === 'status')
      assert.deepEqual(status.before, [{ value: 'active', count: active }], JSON.stringify(status))
      assert.equal(status.unchanged, 0, 'a skipped member already holding past_due is not "already at the after value": it is not written')
      assert.deepEqual(counted(status.skipped_before), skippedRows)
      assert.equal(status.skipped, skipped)
      assert.equal(status.after, 'past_due')

      const cli = renderPlan(view.body)
      const line = cli.split('\n').find((l) => l.startsWith('  status: '))
      const notWritten = skippedRows.map((s) => `"${s.value}" \\(${s.count}\\)`)
      assert.match(line ?? '', new RegExp(`^  status: "active" \\(${active}\\) → "past_due"; not written \\(would be skipped\\): `), cli)
      for (const v of notWritten) assert.match(line!.split('not written')[1]!, new RegExp(v), line)
      assert.doesNotMatch(line!.split('→')[0]!, /past_due|trialing|canceled|paused/, line)
      assert.doesNotMatch(cli, /already hold it/)

      const html = await reviewPageHtml(fx, `/review/plans/${proposed.body.plan_id}`)
      const headline = textOf(pagePart(html, 'uniform-summary'))
      assert.doesNotMatch(headline, /Every one of the/, headline)
      assert.match(headline, new RegExp(`^${active} of the ${active + skipped} records are written, each with the same change: status → past_due\\. ${skipped} records would be skipped, not written: they fail the precondition as frozen\\.`), headline)
      const table = textOf(pagePart(html, 'effect'))
      assert.match(table, /Not written \(would be skipped\)/, table)
      const row = table.slice(table.indexOf('status'))
      assert.match(row, new RegExp(`active \\(${active}\\)\\s*past_due`), row)
      for (const s of skippedRows) assert.match(row, new RegExp(`${s.value} \\(${s.count}\\)`), row)
    })

    test('every member fails the precondition: no line reads as a change, and the page says none is written', async () => {
      const paused = statuses("region = 'us' and status = 'paused'")[0]!.count
      const agent = fx.as('agent')
      const selection = await agent('POST', '/v1/resources/subscriptions/selections', { filter: { region: 'us', status: 'paused' } })
      assert.equal(selection.status, 201, JSON.stringify(selection.body))
      const proposed = await agent('POST', `/v1/selections/${selection.body.selection_id}/plans`, { action: { type: 'mark_past_due' } })
      assert.equal(proposed.status, 201, JSON.stringify(proposed.body))
      const view = await fx.as('reviewer')('GET', `/v1/plans/${proposed.body.plan_id}`)
      const status = view.body.changes.summary.find((s: any) => s.field === 'status')
      assert.deepEqual([status.before, status.skipped_before, status.unchanged], [[], [{ value: 'paused', count: paused }], 0], JSON.stringify(status))
      const cli = renderPlan(view.body)
      const line = cli.split('\n').find((l) => l.startsWith('  status: '))
      assert.match(line ?? '', new RegExp(`^  status: nothing written; not written \\(would be skipped\\): "paused" \\(${paused}\\)`), cli)
      assert.doesNotMatch(line!, /→/)
      assert.doesNotMatch(cli, /gets the same change/)
      const html = await reviewPageHtml(fx, `/review/plans/${proposed.body.plan_id}`)
      const headline = textOf(pagePart(html, 'uniform-summary'))
      assert.doesNotMatch(headline, /gets the same change/, headline)
      assert.match(headline, new RegExp(`None of the ${paused} records is written: every one would be skipped`), headline)
    })

    test('a plan stored before the skipped members were tallied apart reads as it did: no skipped column, the old line', async () => {
      const agent = fx.as('agent')
      const selection = await agent('POST', '/v1/resources/subscriptions/selections', { filter: { region: 'us' } })
      const proposed = await agent('POST', `/v1/selections/${selection.body.selection_id}/plans`, { action: { type: 'mark_past_due', params: {} } })
      assert.ok(proposed.status === 201 || proposed.status === 200, JSON.stringify(proposed.body))
      const old = { before: [{ value: 'active', count: 50 }, { value: 'trialing', count: 9 }], before_complete: true, unchanged: 0 }
      const changes = { summary: [{ field: 'status', after: 'past_due', ...old }], uniform: true, failing_now: 9, changing: 50 }
      await fx.gateway.store.db.updateTable('plans').set({ changes_summary: JSON.stringify(changes) }).where('id', '=', proposed.body.plan_id).execute()
      const view = await fx.as('reviewer')('GET', `/v1/plans/${proposed.body.plan_id}`)
      assert.equal(view.status, 200, JSON.stringify(view.body))
      assert.deepEqual(view.body.changes.summary[0], { field: 'status', after: 'past_due', ...old })
      assert.match(renderPlan(view.body), /^ {2}status: "active" \(50\), "trialing" \(9\) → "past_due"$/m)
      const html = await reviewPageHtml(fx, `/review/plans/${proposed.body.plan_id}`)
      assert.doesNotMatch(textOf(pagePart(html, 'effect')), /Not written/)
    })

    test('a compensation: targets no longer holding what the operation wrote are listed apart, not as restored', async () => {
      const { selection, proposed } = await compensationWithTwoMoved(fx, upstream, `pause-${kind}`)
      const collection = proposed.body.changes.summary.find((s: any) => s.field === 'collection')
      const kept = selection.count - 2
      assert.deepEqual([collection.before, collection.skipped_before, collection.skipped, collection.unchanged], [[{ value: 'paused', count: kept }], [{ value: 'active', count: 2 }], 2, 0], JSON.stringify(collection))
      const line = renderPlan(proposed.body)
        .split('\n')
        .find((l) => l.startsWith('  collection: '))
      assert.equal(line, `  collection: "paused" (${kept}) → "active"; not written (would be skipped): "active" (2)`)
      const table = textOf(pagePart(await reviewPageHtml(fx, `/review/plans/${proposed.body.plan_id}`), 'effect'))
      assert.match(table.slice(table.indexOf('collection')), new RegExp(`paused \\(${kept}\\)\\s*active\\s*0\\s*active \\(2\\)`), table)
    })
  })
}

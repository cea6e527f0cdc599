import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { openDemoUpstream } from './support/demo-upstream.js'
import { allResults, selectProposeApprove, waitForOperation, type Caller } from './support/flow.js'

const CONCURRENCY = 8

/** Every call row of an operation in the audit log, with its summary. */
async function callRows(fx: GatewayFixture, operationId: string): Promise<{ target_id: string | null; summary: any }[]> {
  const out: { target_id: string | null; summary: any }[] = []
  for (let after: number | null | undefined; after !== null; ) {
    const page = await fx.gateway.audit.query({ operation_id: operationId, level: 'call', limit: 1000, ...(after === undefined ? {} : { after_seq: after }) })
    out.push(...page.events.map((e) => ({ target_id: e.target_id, summary: e.summary })))
    after = page.next_cursor
  }
  return out
}

/**
 * On a sql upstream that can write a window as one statement (SQLite, PostgreSQL), the executor writes each
 * claimed window of `concurrency` targets (or the resource's `write_window`) as one UPDATE: every target still
 * gets its own outcome, its own call row in the audit log, and no more targets are written before a halt than
 * one window.
 */
const variants = [
  { upstreamKind: 'sqlite', writeWindow: undefined },
  { upstreamKind: 'postgres', writeWindow: undefined },
  // a window five times the concurrency: the resource's own size, not the concurrency's, bounds each statement
  { upstreamKind: 'sqlite', writeWindow: 40 },
  { upstreamKind: 'postgres', writeWindow: 40 },
] as const
for (const { upstreamKind, writeWindow } of variants) {
  const WINDOW = writeWindow ?? CONCURRENCY
  describe(`window writes on a ${upstreamKind} upstream${writeWindow === undefined ? '' : `, write_window ${writeWindow}`}`, () => {
    let fx: GatewayFixture
    let agent: Caller
    let reviewer: Caller
    before(async () => {
      fx = await startDemoGateway({
        store: 'sqlite',
        upstream: upstreamKind,
        count: writeWindow === undefined ? 600 : 1500,
        edit: (raw) => {
          raw.execution = { ...(raw.execution ?? {}), concurrency: CONCURRENCY }
          if (writeWindow !== undefined) raw.resources.subscriptions.connector.write_window = writeWindow
        },
      })
      agent = fx.as('agent')
      reviewer = fx.as('reviewer')
    })
    after(async () => {
      await fx?.close()
    })

    test('each window is one statement; a record changed behind the gateway is skipped and its window still goes', async () => {
      const action = { type: 'pause_collection', reason: 'window test' }
      const { selection } = await selectProposeApprove(agent, [reviewer], 'subscriptions', { filter: { status: 'past_due', collection: 'active' } }, action)
      assert.ok(selection.count > 3 * WINDOW, `selection of ${selection.count}`)
      const ids = selection.records.map((r: any) => r.id) as string[]
      // the second target of the first window moves on after the freeze: checked with its window, never sent
      const moved = ids[1]!
      const up = await openDemoUpstream(fx.upstreamUrl)
      try {
        await up.run('update subscriptions set version = version + 1 where id = ?', moved)
      } finally {
        await up.close()
      }
      const commit = await agent('POST', '/v1/resources/subscriptions/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action }, { 'idempotency-key': `window-${upstreamKind}-${WINDOW}` })
      assert.equal(commit.status, 202, JSON.stringify(commit.body))
      const operation = await waitForOperation(agent, commit.body.operation_id)
      assert.deepEqual(operation.counts, { pending: 0, in_flight: 0, succeeded: selection.count - 1, failed: 0, skipped: 1, unknown: 0 })
      const results = await allResults(agent, commit.body.operation_id)
      assert.deepEqual(results.filter((r) => r.outcome === 'skipped').map((r) => [r.id, r.reason]), [[moved, 'version_changed']])

      const updates = (await callRows(fx, commit.body.operation_id)).filter((c) => c.summary.method === 'UPDATE')
      // one call row per target written, each naming its target, none for the target never sent
      const every = results.map((r) => r.id as string)
      assert.equal(every.length, selection.count)
      assert.deepEqual(updates.map((c) => c.target_id).sort(), every.filter((id) => id !== moved).sort())
      assert.ok(updates.every((c) => c.summary.outcome === 'written' && c.summary.window >= 1 && c.summary.window <= WINDOW), JSON.stringify(updates.slice(0, 3)))
      assert.equal(updates[0]!.summary.window, WINDOW - 1, 'the first window went without the target that moved')
      assert.equal(updates.filter((c) => c.summary.window === WINDOW).length % WINDOW, 0, 'full windows are whole statements')
      assert.ok(updates.filter((c) => c.summary.window === WINDOW).length >= WINDOW, 'some statement carried a whole window')
      const statements = updates.filter((c) => c.summary.window > 1).length / WINDOW
      assert.ok(statements < selection.count / 2, 'targets went upstream in windows, not one by one')

      const check = await openDemoUpstream(fx.upstreamUrl)
      try {
        const rows = await check.rows(every)
        for (const id of every) assert.equal(rows.get(id)!.version, 2, `${id} written exactly once (the moved one by its mover)`)
      } finally {
        await check.close()
      }
    })

    if (upstreamKind === 'postgres')
      test('an upstream that changes more than the approved effect: every target refused before COMMIT, nothing written, the operation halted', async () => {
        const up = await openDemoUpstream(fx.upstreamUrl)
        try {
          // a trigger the reviewer knows nothing of: every write also moves the region
          await up.run(`create function mangle_region() returns trigger language plpgsql as $$ begin new.region := 'zz'; return new; end $$`)
          await up.run('create trigger mangle_region before update on subscriptions for each row execute function mangle_region()')
          const action = { type: 'resume_collection' }
          const { selection } = await selectProposeApprove(agent, [reviewer], 'subscriptions', { filter: { status: 'past_due', collection: 'paused' } }, action)
          assert.ok(selection.count > 2 * WINDOW, `selection of ${selection.count}`)
          const commit = await agent('POST', '/v1/resources/subscriptions/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action }, { 'idempotency-key': `window-mangled-${WINDOW}` })
          assert.equal(commit.status, 202, JSON.stringify(commit.body))
          const operation = await waitForOperation(agent, commit.body.operation_id)
          assert.equal(operation.state, 'halted')
          // refused before COMMIT since the write judges the fields outside its set (untouched-fields.ts): each
          // target rolled back and rejected naming "region", the operation halted by its run of failures, and
          // nothing reached the upstream (it was: the first window committed, then effect_contradicted halted)
          assert.equal(operation.halt_reason.rule, 'consecutive_errors')
          assert.equal(operation.counts.succeeded, 0, JSON.stringify(operation.counts))
          assert.equal(operation.counts.unknown, 0, JSON.stringify(operation.counts))
          const results = await allResults(agent, commit.body.operation_id)
          const failed = results.filter((r) => r.outcome === 'failed')
          assert.ok(failed.length > 0 && failed.every((r) => r.reason === 'rejected' && /changed "region", which the action does not set[^]*nothing was written/.test(String(r.error))), JSON.stringify(failed.slice(0, 2)))
          const rows = await up.rows(results.map((r) => r.id))
          assert.equal([...rows.values()].filter((r) => r.collection === 'active').length, 0, 'nothing reached the upstream')
        } finally {
          await up.run('drop trigger if exists mangle_region on subscriptions')
          await up.close()
        }
      })
  })
}

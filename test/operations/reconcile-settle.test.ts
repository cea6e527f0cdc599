import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { parseConfig } from '../../src/config/index.js'
import { startGatewayOn } from '../support/gateway-fixture.js'
import { createTempDir, createTestPostgresDatabase, STORE_KINDS, type TempDir, type TestDatabase } from '../support/stores.js'
import { allResults, caller, type Caller, selectProposeApprove, waitForOperation } from './support/flow.js'
import { startUsersUpstream, userIdOf, usersResourceConfig, type UsersUpstream } from './support/users-upstream.js'

const SETTLE_SECONDS = 60
const TIMEOUT_MS = 400

/** A promise the test settles when it chooses: the upstream holds a PATCH until then. */
function gate(): { readonly promise: Promise<void>; open(): void } {
  let open = () => {}
  const promise = new Promise<void>((resolve) => (open = resolve))
  return { promise, open }
}

async function until(what: string, done: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!done()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 10))
  }
}

/**
 * Issue #10 item 14: a write that timed out may still be applied by the upstream after the gateway gave up.
 * A real loopback upstream accepts two PATCHes and holds them past the gateway's timeout (400 ms); the targets
 * end `unknown`. The gateway's clock is injected (real time plus an offset the test moves) so the settle
 * window (60 s) passes without waiting for it.
 *
 * - Reconciled at once, both records are still at their frozen version: nothing is concluded, both stay
 *   `unknown` (`reconcile_settling`) and the report says when to reconcile again. (Before the settle window,
 *   both were recorded "failed (not applied)", and the one that landed later stayed so.)
 * - One held write lands: reconciled inside the window, it is `succeeded` (the effect is there to see).
 * - Past the window, the other, still at its version, is `failed` / `not_applied`.
 * - That write then lands after all: the next reconciliation corrects the conclusion (`applied_late`).
 * - A record another operation wrote since is never credited to this one: the conclusion stays.
 */
for (const kind of STORE_KINDS) {
  describe(`reconcile after a timeout waits out the settle window (${kind} store)`, () => {
    let upstream: UsersUpstream
    let dir: TempDir
    let pg: TestDatabase | null = null
    let gw: Awaited<ReturnType<typeof startGatewayOn>>
    let agent: Caller
    let reviewers: Caller[]
    let offsetMs = 0
    const gates = new Map<string, ReturnType<typeof gate>>()

    before(async () => {
      upstream = await startUsersUpstream(4)
      dir = await createTempDir('warrant-settle-')
      pg = kind === 'postgres' ? await createTestPostgresDatabase() : null
      const users = usersResourceConfig(upstream.origin) as { connector: Record<string, unknown> }
      users.connector.timeout_ms = TIMEOUT_MS
      const config = parseConfig(
        {
          store: pg ? pg.url : `sqlite:${join(dir.path, 'warrant.db')}`,
          execution: { concurrency: 1, reconcile_settle_seconds: SETTLE_SECONDS },
          resources: { users },
        },
        'settle test config',
      )
      gw = await startGatewayOn(config, { resources: ['users'], clock: () => new Date(Date.now() + offsetMs) })
      agent = gw.as('agent')
      reviewers = [gw.as('reviewer'), gw.as('reviewer2')]
    })
    after(async () => {
      for (const g of gates.values()) g.open()
      await gw?.close()
      await upstream?.close()
      await pg?.drop()
      await dir?.drop()
    })

    const reconcile = async () => {
      const answer = await agent('POST', `/v1/operations/${operationId}/reconcile`)
      assert.equal(answer.status, 200, JSON.stringify(answer.body))
      return answer.body
    }
    const outcomeOf = async (id: string) => (await allResults(agent, operationId)).find((r) => r.id === id)
    let operationId = ''
    const [applied, late, plain, other] = [userIdOf(1), userIdOf(2), userIdOf(3), userIdOf(4)]

    test('two writes held past the timeout end unknown; the third succeeds', async () => {
      for (const id of [applied, late]) gates.set(id, gate())
      upstream.onWrite = (id) => (gates.has(id) && upstream.writes.get(id) === 1 ? { hold: gates.get(id)!.promise } : undefined)
      const { selection } = await selectProposeApprove(agent, reviewers, 'users', { filter: { id: { in: [applied, late, plain] } } }, { type: 'set_role', role: 'viewer' })
      const commit = await agent('POST', '/v1/resources/users/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action: { type: 'set_role', role: 'viewer' } }, { 'idempotency-key': `settle-${kind}` })
      assert.equal(commit.status, 202, JSON.stringify(commit.body))
      operationId = commit.body.operation_id
      const operation = await waitForOperation(agent, operationId)
      assert.equal(operation.state, 'completed_with_unknown')
      assert.deepEqual([operation.counts.succeeded, operation.counts.unknown], [1, 2])
      for (const id of [applied, late]) assert.equal(upstream.users.get(id)!.version, 1, `${id}'s write is held, not applied`)
    })

    test('reconciled at once: nothing concluded, both stay unknown (settling) until the window ends', async () => {
      const report = await reconcile()
      assert.deepEqual([report.examined, report.succeeded, report.failed, report.still_unknown, report.settling], [2, 0, 0, 2, 2])
      assert.ok(report.settles_at > new Date(Date.now() + offsetMs + (SETTLE_SECONDS - 5) * 1000).toISOString(), report.settles_at)
      for (const id of [applied, late]) {
        const r = await outcomeOf(id)
        assert.deepEqual([r.outcome, r.reason], ['unknown', 'reconcile_settling'])
        assert.match(r.error, /may still apply it until/)
      }
    })

    test('a held write that lands is succeeded, inside the window', async () => {
      gates.get(applied)!.open()
      await until(`${applied} applied`, () => upstream.users.get(applied)!.version === 2)
      const report = await reconcile()
      assert.deepEqual([report.examined, report.succeeded, report.failed, report.settling], [2, 1, 0, 1])
      const r = await outcomeOf(applied)
      assert.deepEqual([r.outcome, r.reason], ['succeeded', 'reconciled'])
    })

    test('past the window, the one still at its version is failed (not applied)', async () => {
      offsetMs += (SETTLE_SECONDS + 1) * 1000
      const report = await reconcile()
      assert.deepEqual([report.examined, report.succeeded, report.failed, report.settling, report.settles_at], [1, 0, 1, 0, null])
      const r = await outcomeOf(late)
      assert.deepEqual([r.outcome, r.reason], ['failed', 'not_applied'])
      assert.equal(report.operation.state, 'partially_failed')
    })

    test('that write lands after all: the next reconciliation corrects it (applied_late)', async () => {
      gates.get(late)!.open()
      await until(`${late} applied`, () => upstream.users.get(late)!.version === 2)
      const report = await reconcile()
      assert.deepEqual([report.examined, report.corrected], [0, 1])
      const r = await outcomeOf(late)
      assert.deepEqual([r.outcome, r.reason], ['succeeded', 'applied_late'])
      assert.deepEqual(report.operation.counts, { pending: 0, in_flight: 0, succeeded: 3, failed: 0, skipped: 0, unknown: 0 })
      assert.equal(report.operation.state, 'succeeded')
      assert.equal(upstream.writes.get(late), 1, 'reconciliation never writes')
    })

    test('a "not applied" target whose record another operation wrote since is not credited to this one', async () => {
      // One held write concluded not applied; a second operation then sets the same role on the record.
      gates.set(other, gate())
      const { selection } = await selectProposeApprove(agent, reviewers, 'users', { filter: { id: { in: [other] } } }, { type: 'set_role', role: 'viewer' })
      const first = await agent('POST', '/v1/resources/users/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action: { type: 'set_role', role: 'viewer' } }, { 'idempotency-key': `settle-other-${kind}` })
      operationId = first.body.operation_id
      assert.equal((await waitForOperation(agent, operationId)).counts.unknown, 1)
      offsetMs += (SETTLE_SECONDS + 1) * 1000
      assert.equal((await reconcile()).failed, 1)
      gates.get(other)!.open() // nothing changed the record meanwhile, so the held write lands
      await until(`${other} applied`, () => upstream.users.get(other)!.version === 2)
      // a later operation sends a write to the record (a recovery of the "failed" target, say)
      const again = await selectProposeApprove(agent, reviewers, 'users', { filter: { id: { in: [other] } } }, { type: 'set_role', role: 'viewer' })
      const second = await agent('POST', `/v1/plans/${again.plan.plan_id}/commit`, { expected_digest: again.plan.plan_digest }, { 'idempotency-key': `settle-other-2-${kind}` })
      assert.equal(second.status, 202, JSON.stringify(second.body))
      await waitForOperation(agent, second.body.operation_id)
      const report = await reconcile()
      assert.equal(report.corrected, 0, 'the record holding the effect is explained by the later operation as well')
      const r = await outcomeOf(other)
      assert.deepEqual([r.outcome, r.reason], ['failed', 'not_applied'])
    })
  })
}

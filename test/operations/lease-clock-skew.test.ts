import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { sql } from 'kysely'
import type { OperationService } from '../../src/operations/index.js'
import { AGENT, createHarness, type Harness } from './support/harness.js'

/**
 * Several `warrant serve` instances on one PostgreSQL store run on several machines, whose clocks disagree. A lease
 * judged on each process's own clock was taken at once by an instance whose clock ran a minute ahead (it declared
 * the holder's write in flight `unknown`, though the holder applied it, and the operation bounced between them),
 * and one written by an instance whose clock ran behind looked expired to the others the moment it was written.
 * Lease times on PostgreSQL are now the database's: the services here share one store and differ only in their
 * injected clocks, by more than the lease. (SQLite is one machine, one clock: not run there.)
 */
const MINUTE = 60_000
const LEASE_SECONDS = 3

async function withStore(body: (h: Harness) => Promise<void>): Promise<void> {
  const h = await createHarness('postgres', { count: 12, execution: { concurrency: 1, lease_seconds: LEASE_SECONDS }, service: { executors: false } })
  try {
    // each write takes a while: the operation runs for about 1.5 s, under leases both instances can see
    h.upstream.writeDelayMs = 120
    await body(h)
  } finally {
    await h.close()
  }
}

const skewed = (ms: number) => () => new Date(Date.now() + ms)

/** Watches the operation's lease owner until it finishes; returns every owner seen. */
async function owners(h: Harness, holder: OperationService, operationId: string): Promise<string[]> {
  const seen = new Set<string>()
  const deadline = Date.now() + 20_000
  for (;;) {
    const row = await h.store.db.selectFrom('operations').select(['lease_owner', 'state']).where('id', '=', operationId).executeTakeFirstOrThrow()
    if (row.lease_owner !== null) seen.add(row.lease_owner)
    if (!['pending', 'running'].includes(row.state)) break
    assert.ok(Date.now() < deadline, `the operation did not finish: ${JSON.stringify(row)}`)
    await new Promise((r) => setTimeout(r, 20))
  }
  await holder.waitFor(operationId, 1_000)
  return [...seen]
}

/** The operation's lease once it is claimed, and the store's now (ms since the epoch) as it is read. */
async function claimed(h: Harness, operationId: string): Promise<{ lease_expires_at: string; db_now: string }> {
  for (let tries = 0; ; tries++) {
    const row = await h.store.db
      .selectFrom('operations')
      .select(['lease_expires_at', sql<string>`(extract(epoch from now()) * 1000)::float8`.as('db_now')])
      .where('id', '=', operationId)
      .executeTakeFirstOrThrow()
    if (row.lease_expires_at !== null) return { lease_expires_at: row.lease_expires_at, db_now: row.db_now }
    assert.ok(tries < 250, 'the holder never claimed the operation')
    await new Promise((r) => setTimeout(r, 20))
  }
}

async function assertRunOnceByHolder(h: Harness, holder: OperationService, operationId: string, seen: readonly string[]): Promise<void> {
  assert.deepEqual(seen, ['holder'], 'only the holder ever held the lease')
  const view = await holder.get(AGENT, operationId)
  assert.deepEqual([view.state, view.counts.succeeded, view.counts.unknown], ['succeeded', 12, 0], 'no applied write was declared unknown')
  assert.ok([...h.upstream.calls.values()].every((n) => n === 1), 'every target written once')
}

describe('operation leases on a PostgreSQL store shared by instances whose clocks disagree', () => {
  test('an instance whose clock runs a minute ahead does not take a live lease', () =>
    withStore(async (h) => {
      const holder = h.instance({ executors: 'commits', instanceId: 'holder' })
      const receipt = await holder.commitPlan(AGENT, h.plan.plan_id, { expectedDigest: h.plan.plan_digest, idempotencyKey: 'k-ahead' })
      const ahead = h.instance({ executors: true, instanceId: 'ahead', clock: skewed(MINUTE) })
      await ahead.recover()
      await assertRunOnceByHolder(h, holder, receipt.operation_id, await owners(h, holder, receipt.operation_id))
    }))

  test('a lease written by an instance whose clock runs a minute behind is live to the others', () =>
    withStore(async (h) => {
      const holder = h.instance({ executors: 'commits', instanceId: 'holder', clock: skewed(-MINUTE) })
      const receipt = await holder.commitPlan(AGENT, h.plan.plan_id, { expectedDigest: h.plan.plan_digest, idempotencyKey: 'k-behind' })
      // the lease ends a lease's length from the database's now, whatever the holder's clock says
      const { lease_expires_at: until, db_now: dbNow } = await claimed(h, receipt.operation_id)
      const ahead = Date.parse(until) - Number(dbNow)
      // a lease's length, give or take the read's own instant: its now() is set as its statement arrives, its snapshot
      // a moment later, so a renewal started in between is seen ending up to that moment past it (3000.08 ms was seen)
      assert.ok(ahead > 1_000 && ahead <= LEASE_SECONDS * 1000 + 50, `the lease ends ${ahead} ms after the store's now`)
      const other = h.instance({ executors: true, instanceId: 'other' })
      await other.recover()
      await assertRunOnceByHolder(h, holder, receipt.operation_id, await owners(h, holder, receipt.operation_id))
    }))
})

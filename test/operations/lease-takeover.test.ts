import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { describe, test } from 'node:test'
import { defaultOwner, instanceOwner } from '../../src/store/index.js'
import { STORE_KINDS } from '../support/stores.js'
import { AGENT, createHarness, type Harness, type HarnessOptions } from './support/harness.js'

async function withHarness(kind: (typeof STORE_KINDS)[number], options: HarnessOptions, body: (h: Harness) => Promise<void>): Promise<void> {
  const h = await createHarness(kind, options)
  try {
    await body(h)
  } finally {
    await h.close()
  }
}

const HOUR_AHEAD = () => new Date(Date.now() + 3_600_000).toISOString()

/**
 * A lease owner name of this machine, as a process with `pid` would have chosen it before names carried the process
 * start time (this process's start would not be that pid's: a live pid would read as reused).
 */
function ownerWithPid(pid: number): string {
  const parts = defaultOwner().split(':').slice(0, 4)
  parts[1] = String(pid)
  return parts.join(':')
}

/** The pid of a process of this machine that has ended. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' })
  await once(child, 'exit')
  return child.pid!
}

/** Puts a committed operation back as a killed instance left it: running, leased for an hour, two targets in flight. */
async function leftBy(h: Harness, operationId: string, owner: string): Promise<void> {
  await h.store.db.updateTable('operations').set({ state: 'running', lease_owner: owner, lease_expires_at: HOUR_AHEAD() }).where('id', '=', operationId).execute()
  await h.store.db.updateTable('operation_targets').set({ state: 'in_flight' }).where('operation_id', '=', operationId).where('ord', 'in', [0, 1]).execute()
}

for (const kind of STORE_KINDS) {
  describe(`leases across restarts and long operations (${kind} store)`, () => {
    test('a restarted instance (same WARRANT_INSTANCE_ID) resumes its operation at once where its old process is proven gone; one whose process still runs keeps it', () =>
      withHarness(kind, { count: 12, service: { executors: false } }, async (h) => {
        const receipt = await h.operations.commitPlan(AGENT, h.plan.plan_id, { expectedDigest: h.plan.plan_digest, idempotencyKey: 'k-restart' })
        const secondPlan = await h.addPlan()
        const live = await h.operations.commitPlan(AGENT, secondPlan.plan_id, { expectedDigest: secondPlan.plan_digest, idempotencyKey: 'k-alive' })
        await leftBy(h, receipt.operation_id, `alpha@${ownerWithPid(await deadPid())}`)
        // the same id, held by a process that still runs (this test's parent): a replica given the same id
        const liveOwner = `alpha@${ownerWithPid(process.ppid)}`
        await leftBy(h, live.operation_id, liveOwner)
        const other = h.instance({ executors: true, instanceId: instanceOwner('beta') })
        await other.recover()
        const restarted = h.instance({ executors: true, instanceId: instanceOwner('alpha') })
        await restarted.recover()
        const view = await restarted.waitFor(receipt.operation_id, 20_000)
        assert.deepEqual([view.state, view.counts.succeeded, view.counts.unknown], ['completed_with_unknown', 10, 2])
        for (const id of ['u0000', 'u0001']) assert.equal(h.upstream.calls.get(id), undefined, `${id} was in flight: never re-sent`)
        const held = await h.store.db.selectFrom('operations').select(['state', 'lease_owner']).where('id', '=', live.operation_id).executeTakeFirstOrThrow()
        assert.deepEqual(held, { state: 'running', lease_owner: liveOwner })
        const inFlight = await h.store.db.selectFrom('operation_targets').select('state').where('operation_id', '=', live.operation_id).where('state', '=', 'unknown').execute()
        assert.equal(inFlight.length, 0, 'the live process\'s targets in flight were not declared interrupted')
      }))

    test('a killed process of this machine (default name, pid gone) has its lease taken at once; a live one keeps it', () =>
      withHarness(kind, { count: 12, service: { executors: false } }, async (h) => {
        const live = h.operations
        const first = await live.commitPlan(AGENT, h.plan.plan_id, { expectedDigest: h.plan.plan_digest, idempotencyKey: 'k-live' })
        const secondPlan = await h.addPlan()
        const second = await live.commitPlan(AGENT, secondPlan.plan_id, { expectedDigest: secondPlan.plan_digest, idempotencyKey: 'k-dead' })
        // the first is held by this very test process (alive), the second by a process that has ended
        const liveOwner = ownerWithPid(process.ppid)
        await leftBy(h, first.operation_id, liveOwner)
        await leftBy(h, second.operation_id, ownerWithPid(await deadPid()))
        const restarted = h.instance({ executors: true })
        await restarted.recover()
        const view = await restarted.waitFor(second.operation_id, 20_000)
        assert.deepEqual([view.state, view.counts.unknown], ['completed_with_unknown', 2])
        const held = await h.store.db.selectFrom('operations').select(['state', 'lease_owner']).where('id', '=', first.operation_id).executeTakeFirstOrThrow()
        assert.deepEqual(held, { state: 'running', lease_owner: liveOwner })
      }))

    test('a process whose clock passed its lease before it starts a claimed target stops there: the target, claimed under the lease, is never written and is pending again', () => {
      // One write every 10 s of the services' clock, which the pacer's waits move on virtually; the lease ends 30 s
      // after the commit and would be renewed every 10 s of real time, so it never is here. Targets 1-3 start at
      // 0, 10 and 20 s. Target 4 is claimed at ~20 s, still under the lease (the store checks it), then waits for
      // its slot until 30 s: by then the lease has passed, and the executor must not start it.
      let skew = 0
      const clock = () => new Date(Date.now() + skew)
      const wait = async (ms: number) => {
        skew += ms
      }
      return withHarness(kind, { count: 12, execution: { concurrency: 1, lease_seconds: 30, max_writes_per_second: 0.1 }, service: { executors: 'commits', wait }, clock }, async (h) => {
        const receipt = await h.operations.commitPlan(AGENT, h.plan.plan_id, { expectedDigest: h.plan.plan_digest, idempotencyKey: 'k-stall' })
        const deadline = Date.now() + 10_000
        for (;;) {
          const row = await h.store.db.selectFrom('operations').select(['lease_owner', 'state']).where('id', '=', receipt.operation_id).executeTakeFirstOrThrow()
          // started, then gave its lease back
          if (h.upstream.calls.size > 0 && row.lease_owner === null) break
          assert.ok(Date.now() < deadline, `the executor did not stop: ${JSON.stringify(row)}`)
          await new Promise((r) => setTimeout(r, 20))
        }
        const view = await h.operations.get(AGENT, receipt.operation_id)
        assert.equal(view.state, 'running', 'stopped, not finished: the lease given back, another executor resumes it')
        assert.deepEqual([...h.upstream.calls.keys()], ['u0000', 'u0001', 'u0002'], 'no write started once the clock had passed the lease')
        const ledger = await h.store.db.selectFrom('operation_targets').select(['state']).where('operation_id', '=', receipt.operation_id).orderBy('ord').execute()
        assert.deepEqual(ledger.map((t) => t.state), [...Array(3).fill('succeeded'), ...Array(9).fill('pending')])
      })
    })

    test('the lease is renewed while a long operation runs (the executor never loses it to its own stalled loop)', () => {
      const stopped: object[] = []
      const log = { info: (fields: object, message: string) => void (message.includes('stopped before the end') && stopped.push(fields)), warn: () => undefined, error: () => undefined }
      // 2,000 targets against a 1.5 s lease (renewed every third of it): an executor that held the event loop for its
      // whole run, or for a batch of 200, loses it. A shorter lease measured the machine instead: with a load of
      // 15 on 2 cores the process itself went unscheduled for 0.3 s, and the executor rightly stopped. A target starts
      // only while a quarter of the lease is left (LEASE_MARGIN), so a renewal may be 5/12 of the lease late: 0.6 s
      // here, what a 1 s lease allowed before the margin (at 1 s, a load of 10 stopped it after 496 targets).
      return withHarness(kind, { count: 2000, execution: { lease_seconds: 1.5, concurrency: 8, batch_size: 200 }, service: { log } }, async (h) => {
        const receipt = await h.operations.commitPlan(AGENT, h.plan.plan_id, { expectedDigest: h.plan.plan_digest, idempotencyKey: 'k-long' })
        const view = await h.operations.waitFor(receipt.operation_id, 240_000)
        assert.deepEqual([view.state, view.counts.succeeded], ['succeeded', 2000])
        assert.deepEqual(stopped, [], 'the executor stopped before the end (its lease was lost)')
        assert.ok([...h.upstream.calls.values()].every((n) => n === 1))
      })
    })
  })
}

import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { sql } from 'kysely'
import type { Actor } from '../../src/contract/index.js'
import { createLogger, openGateway, type Gateway } from '../../src/gateway/index.js'
import type { Store } from '../../src/store/index.js'
import { startDemoGateway } from '../support/gateway-fixture.js'
import { startOddUpstream, thingsResourceConfig } from './support/odd-upstream.js'

/**
 * Several `warrant serve` instances on one PostgreSQL store run on several machines, whose clocks disagree. An
 * approval lasts a short time (15 minutes by default), a selection 30, a token and a review session longer; each
 * was written and judged on the deciding process's own clock. An instance whose clock ran 10 minutes slow
 * committed on an approval that had lapsed by the store's time and every other instance's; one running fast
 * refused a live one, and the approvals, selections and tokens it wrote lasted longer by its lead. These are now
 * judged and written on the database's time on PostgreSQL (as leases are, store/store-clock.ts); on SQLite, one
 * machine, the process's clock is the store's.
 *
 * The instances here share one store and differ only in their injected clocks.
 */
const MINUTE = 60_000
const skewed = (ms: number) => () => new Date(Date.now() + ms)

/** The store's now, ms since the epoch. */
async function storeNow(store: Store): Promise<number> {
  const row = await sql<{ ms: number }>`select (extract(epoch from statement_timestamp()) * 1000)::float8 as ms`.execute(store.db)
  return Number(row.rows[0]!.ms)
}

/** `ms` from the store's now, as the ISO text the timestamp columns hold. */
async function storeTime(store: Store, ms: number): Promise<string> {
  return new Date((await storeNow(store)) + ms).toISOString()
}

interface World {
  readonly fx: Awaited<ReturnType<typeof startDemoGateway>>
  readonly agent: Actor
  readonly alice: Actor
  /** another gateway on the same store, its clock `skewMs` off */
  instance(skewMs: number): Promise<Gateway>
}

async function withWorld(kind: 'sqlite' | 'postgres', body: (w: World) => Promise<void>, clock?: () => Date): Promise<void> {
  const upstream = await startOddUpstream()
  const fx = await startDemoGateway({ store: kind, count: 20, serve: false, ...(clock ? { clock } : {}), edit: (c) => void (c.resources.things = thingsResourceConfig(upstream.origin)) })
  const opened: Gateway[] = []
  try {
    const gw = fx.gateway
    const agent = await gw.principals.authenticate((await gw.principals.issue({ name: 'things-agent', role: 'agent', scopes: { resources: ['things'], actions: '*' } })).token, 'http')
    const alice = await gw.principals.authenticate(fx.tokens.reviewer, 'http')
    await body({
      fx,
      agent,
      alice,
      async instance(skewMs) {
        const other = await openGateway({ config: fx.config, executors: false, log: createLogger({ level: 'silent' }), clock: skewed(skewMs) })
        opened.push(other)
        return other
      },
    })
  } finally {
    for (const other of opened) await other.close()
    await fx.close()
    await upstream.close()
  }
}

async function proposed(gw: Gateway, agent: Actor) {
  const selection = await gw.selections.create(agent, 'things', { filter: { status: 'open' } })
  const plan = await gw.plans.propose(agent, selection.selection_id, { action: { type: 'set_status', params: { status: 'closed' } } })
  return { selection, plan }
}

const operationsOf = async (store: Store, planId: string) => (await store.db.selectFrom('operations').select('id').where('plan_id', '=', planId).execute()).length

describe('expiry on a PostgreSQL store shared by instances whose clocks disagree', () => {
  test('an approval lapsed by the store\'s time is refused by an instance whose clock runs 10 minutes slow: 410, nothing recorded', () =>
    withWorld('postgres', async ({ fx, agent, alice, instance }) => {
      const { plan } = await proposed(fx.gateway, agent)
      await fx.gateway.plans.decide(alice, plan.plan_id, { decision: 'approve', expected_plan_digest: plan.plan_digest })
      // it lapsed a minute ago by the store's time (and every instance whose clock is right)
      await fx.gateway.store.db.updateTable('approvals').set({ expires_at: await storeTime(fx.gateway.store, -MINUTE) }).where('plan_id', '=', plan.plan_id).execute()
      const slow = await instance(-10 * MINUTE)
      await assert.rejects(slow.operations.commitPlan(agent, plan.plan_id, { idempotencyKey: 'slow-commit', expectedDigest: plan.plan_digest }), (e: any) => e.code === 'expired' && /approval of plan .* expired/.test(e.message))
      assert.equal(await operationsOf(fx.gateway.store, plan.plan_id), 0, 'no operation was recorded')
      const view = await slow.plans.load(agent, plan.plan_id)
      assert.equal(view.state, 'pending', 'the slow instance does not show the lapsed approval as approved')
    }))

  test('an approval still live by the store\'s time is committed by an instance whose clock runs 20 minutes fast', () =>
    withWorld('postgres', async ({ fx, agent, alice, instance }) => {
      const { plan } = await proposed(fx.gateway, agent)
      await fx.gateway.plans.decide(alice, plan.plan_id, { decision: 'approve', expected_plan_digest: plan.plan_digest })
      const fast = await instance(20 * MINUTE)
      const receipt = await fast.operations.commitPlan(agent, plan.plan_id, { idempotencyKey: 'fast-commit', expectedDigest: plan.plan_digest })
      assert.equal(receipt.created, true)
    }))

  test('an approval and a selection made on an instance whose clock runs 10 minutes fast last their time from the store\'s now, not its own', () =>
    withWorld('postgres', async ({ fx, agent, alice, instance }) => {
      const fast = await instance(10 * MINUTE)
      const before = await storeNow(fx.gateway.store)
      const { selection, plan } = await proposed(fast, agent)
      const approval = await fast.plans.decide(alice, plan.plan_id, { decision: 'approve', expected_plan_digest: plan.plan_digest })
      const after = await storeNow(fx.gateway.store)
      const selectionLasts = Date.parse(selection.expires_at) - before
      assert.ok(selectionLasts <= 30 * MINUTE + (after - before) && selectionLasts > 29 * MINUTE, `the selection lasts ${selectionLasts / MINUTE} min from the store's now`)
      const approvalLasts = Date.parse(approval.expires_at!) - before
      assert.ok(approvalLasts <= 15 * MINUTE + (after - before) && approvalLasts > 14 * MINUTE, `the approval lasts ${approvalLasts / MINUTE} min from the store's now`)
    }))

  test('a selection expired by the store\'s time is refused at commit by an instance whose clock runs 10 minutes slow', () =>
    withWorld('postgres', async ({ fx, agent, alice, instance }) => {
      const { selection, plan } = await proposed(fx.gateway, agent)
      await fx.gateway.plans.decide(alice, plan.plan_id, { decision: 'approve', expected_plan_digest: plan.plan_digest })
      await fx.gateway.store.db.updateTable('selections').set({ expires_at: await storeTime(fx.gateway.store, -MINUTE) }).where('id', '=', selection.selection_id).execute()
      const slow = await instance(-10 * MINUTE)
      await assert.rejects(slow.operations.commitPlan(agent, plan.plan_id, { idempotencyKey: 'slow-selection', expectedDigest: plan.plan_digest }), (e: any) => e.code === 'expired')
      assert.equal(await operationsOf(fx.gateway.store, plan.plan_id), 0, 'no operation was recorded')
    }))

  test('a token expired by the store\'s time does not authenticate on an instance whose clock runs 10 minutes slow; one issued on a fast instance lasts its time from the store\'s now', () =>
    withWorld('postgres', async ({ fx, instance }) => {
      const issued = await fx.gateway.principals.issue({ name: 'short-lived', role: 'reviewer' })
      await fx.gateway.store.db.updateTable('tokens').set({ expires_at: await storeTime(fx.gateway.store, -MINUTE) }).where('id', '=', issued.token_id).execute()
      const slow = await instance(-10 * MINUTE)
      await assert.rejects(slow.principals.authenticate(issued.token, 'http'), (e: any) => e.code === 'unauthenticated')
      const fast = await instance(10 * MINUTE)
      const before = await storeNow(fx.gateway.store)
      const hour = await fast.principals.issue({ name: 'an-hour', role: 'reviewer', ttlMs: 60 * MINUTE })
      const lasts = Date.parse(hour.expires_at!) - before
      assert.ok(lasts <= 60 * MINUTE + 1_000 && lasts > 59 * MINUTE, `the token lasts ${lasts / MINUTE} min from the store's now`)
    }))

  test('a review session past its end by the store\'s time is not resumed on an instance whose clock runs 10 minutes slow', () =>
    withWorld('postgres', async ({ fx, instance }) => {
      const opened = await fx.gateway.review.sessions.signIn(fx.tokens.reviewer)
      await fx.gateway.store.db.updateTable('review_sessions').set({ expires_at: await storeTime(fx.gateway.store, -MINUTE) }).execute()
      const slow = await instance(-10 * MINUTE)
      assert.equal(await slow.review.sessions.resume(opened.sessionId), null)
    }))

  test('a review session idle past its hour by the store\'s time is not resumed on an instance whose clock runs 10 minutes slow', () =>
    withWorld('postgres', async ({ fx, instance }) => {
      const opened = await fx.gateway.review.sessions.signIn(fx.tokens.reviewer)
      // last seen an hour and a minute ago by the store; 51 minutes ago by the slow instance's clock
      await fx.gateway.store.db.updateTable('review_sessions').set({ last_seen_at: await storeTime(fx.gateway.store, -61 * MINUTE) }).execute()
      const slow = await instance(-10 * MINUTE)
      assert.equal(await slow.review.sessions.resume(opened.sessionId), null)
    }))
})

describe('a SQLite store with a skewed injected clock: one machine, one clock, the injected one', () => {
  test('an approval is written and judged on that clock: it commits within its 15 minutes of it, and is refused after', async () => {
    const clock = { now: Date.now() - 10 * MINUTE }
    await withWorld(
      'sqlite',
      async ({ fx, agent, alice }) => {
        const { plan } = await proposed(fx.gateway, agent)
        const approval = await fx.gateway.plans.decide(alice, plan.plan_id, { decision: 'approve', expected_plan_digest: plan.plan_digest })
        assert.equal(Date.parse(approval.expires_at!), clock.now + 15 * MINUTE, 'the expiry is 15 minutes on the injected clock')
        clock.now += 16 * MINUTE
        await assert.rejects(fx.gateway.operations.commitPlan(agent, plan.plan_id, { idempotencyKey: 'sqlite-late', expectedDigest: plan.plan_digest }), (e: any) => e.code === 'expired')
        clock.now -= 2 * MINUTE
        const receipt = await fx.gateway.operations.commitPlan(agent, plan.plan_id, { idempotencyKey: 'sqlite-in-time', expectedDigest: plan.plan_digest })
        assert.equal(receipt.created, true)
      },
      () => new Date(clock.now),
    )
  })
})

describe('the review queue on a PostgreSQL store shared by instances whose clocks disagree', () => {
  test('an instance whose clock runs 40 minutes fast lists a plan still open by the store\'s time, as its page shows it pending', () =>
    withWorld('postgres', async ({ fx, agent, alice, instance }) => {
      const { plan } = await proposed(fx.gateway, agent)
      const fast = await instance(40 * MINUTE)
      assert.equal((await fast.plans.view(alice, plan.plan_id)).state, 'pending', 'the store says the plan waits for a decision')
      const { plans } = await fast.review.queue.awaitingDecision(alice)
      assert.deepEqual(
        plans.map((p) => p.plan_id),
        [plan.plan_id],
        'the queue judges expiry on the store\'s time, as the plan page does (the selection lasts 30 minutes by it)',
      )
    }))
})

import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { sql } from 'kysely'
import { renderPlan } from '../../src/cli/render-selection.js'
import type { WarrantConfig } from '../../src/config/index.js'
import { createLogger, openGateway, type Gateway } from '../../src/gateway/index.js'
import type { Store } from '../../src/store/index.js'
import { callTool } from '../mcp/support.js'
import { call, serveGateway, startDemoGateway } from '../support/gateway-fixture.js'
import { pagePart, reviewPageHtml } from '../support/review-page.js'
import { STORE_KINDS } from '../support/stores.js'

/**
 * An operator who cuts `approval.ttl_minutes` from a day to 5 minutes (during an incident, say) means every approval,
 * not only those given from then on (approval-ttl-tightened.test.ts): an approval given before the cut kept its
 * stored day, and a commit hours later went through. An approval now lasts until the earlier of its stored expiry and
 * its approval time plus the TTL the config asks now, in the commit's check and in every view of the plan; a longer
 * TTL never lengthens it, nor brings back one that lapsed under the cut (the cut, once applied, is stored). On PostgreSQL that is judged at the database's time: the instances here run 10 minutes slow
 * (the refusal) and fast (the commit), so judged on their own clocks the answers would be the other way round.
 */
const MINUTE = 60_000
const DAY_MINUTES = 1440
const action = (reason: string) => ({ type: 'pause_collection', params: { reason } })

/** The store's now in ms: the database's on PostgreSQL, the process's on SQLite. */
async function storeNow(store: Store): Promise<number> {
  if (store.dialect !== 'postgres') return Date.now()
  const row = await sql<{ ms: number }>`select (extract(epoch from statement_timestamp()) * 1000)::float8 as ms`.execute(store.db)
  return Number(row.rows[0]!.ms)
}

/** Moves a plan's approval back in time: given `agoMs` before the store's now, lasting `givenMs` from then. Returns its decided_at. */
async function approvedAgo(store: Store, planId: string, agoMs: number, givenMs: number): Promise<string> {
  const decided = (await storeNow(store)) - agoMs
  const decidedAt = new Date(decided).toISOString()
  await store.db.updateTable('approvals').set({ decided_at: decidedAt, expires_at: new Date(decided + givenMs).toISOString() }).where('plan_id', '=', planId).execute()
  return decidedAt
}

const plus = (iso: string, ms: number) => new Date(Date.parse(iso) + ms).toISOString()

for (const kind of STORE_KINDS) {
  describe(`an approval given before the config shortened approval.ttl_minutes lapses at the shorter TTL (${kind} store)`, () => {
    test('refused as lapsed at commit naming the TTL cut, shown so in every view; a longer TTL never lengthens it', async () => {
      const fx = await startDemoGateway({
        store: kind,
        count: 200,
        serve: true,
        edit: (raw) => {
          raw.resources.subscriptions.approval = { ttl_minutes: DAY_MINUTES }
          raw.resources.subscriptions.selection_ttl_minutes = 2 * DAY_MINUTES
        },
      })
      const opened: Gateway[] = []
      const servers: { stop(): Promise<void> }[] = []
      /** Another process on the same store, `approval.ttl_minutes` edited, its clock `skewMs` off (PostgreSQL only: on SQLite the process's clock is the store's). */
      const restarted = async (ttl: number, skewMs: number) => {
        await fx.gateway.audit.flush()
        const config = structuredClone(fx.config) as WarrantConfig & { resources: Record<string, any> }
        config.resources.subscriptions.approval.ttl_minutes = ttl
        const skew = kind === 'postgres' ? skewMs : 0
        const gateway = await openGateway({ config, executors: false, log: createLogger({ level: 'silent' }), clock: () => new Date(Date.now() + skew) })
        opened.push(gateway)
        const served = await serveGateway(gateway)
        servers.push(served)
        return { gateway, base: served.base }
      }
      try {
        const agent = await fx.gateway.principals.authenticate(fx.tokens.agent, 'http')
        const alice = await fx.gateway.principals.authenticate(fx.tokens.reviewer, 'http')
        const selection = await fx.gateway.selections.create(agent, 'subscriptions', { filter: { status: 'past_due', region: 'us' } })
        const propose = async (reason: string) => {
          const plan = await fx.gateway.plans.propose(agent, selection.selection_id, { action: action(reason) })
          const approval = await fx.gateway.plans.decide(alice, plan.plan_id, { decision: 'approve', expected_plan_digest: plan.plan_digest })
          assert.equal(Date.parse(approval.expires_at!) - Date.parse(approval.decided_at), DAY_MINUTES * MINUTE, 'given for a day')
          return plan
        }
        const stale = await propose('given 6 minutes ago')
        const live = await propose('given 2 minutes ago')
        const lapsed = await propose('lapsed at its stored time')
        const staleAt = await approvedAgo(fx.gateway.store, stale.plan_id, 6 * MINUTE, DAY_MINUTES * MINUTE)
        const liveAt = await approvedAgo(fx.gateway.store, live.plan_id, 2 * MINUTE, DAY_MINUTES * MINUTE)
        // given when the TTL was 3 minutes: it lapsed 3 minutes ago, whatever the config says now
        const lapsedAt = await approvedAgo(fx.gateway.store, lapsed.plan_id, 6 * MINUTE, 3 * MINUTE)

        // the operator cuts the TTL to 5 minutes; this instance's clock runs 10 minutes slow
        const slow = await restarted(5, -10 * MINUTE)
        const refused = await call(slow.base, 'POST', `/v1/plans/${stale.plan_id}/commit`, { expected_digest: stale.plan_digest }, { authorization: `Bearer ${fx.tokens.agent}`, 'idempotency-key': `ttl-cut-${kind}` })
        assert.equal(refused.status, 410, JSON.stringify(refused.body))
        assert.equal(refused.body.error.code, 'expired')
        const cutEnd = plus(staleAt, 5 * MINUTE)
        assert.match(refused.body.error.message, new RegExp(`approval of plan ${stale.plan_id} expired \\(at ${cutEnd.replace(/\./g, '\\.')}\\)`))
        assert.match(refused.body.error.message, /approval\.ttl_minutes was shortened to 5 since .*given for 1440 minutes/)
        assert.deepEqual(refused.body.error.details.ttl_minutes, { given: DAY_MINUTES, now: 5 })
        const operations = await fx.gateway.store.db.selectFrom('operations').select('id').where('plan_id', '=', stale.plan_id).execute()
        assert.equal(operations.length, 0, 'no operation was recorded')

        // every view says it lapsed at the cut: the API, the CLI's rendering of it, MCP get_plan, the review page
        const viewed = await call(slow.base, 'GET', `/v1/plans/${stale.plan_id}`, undefined, { authorization: `Bearer ${fx.tokens.agent}` })
        assert.equal(viewed.status, 200)
        assert.equal(viewed.body.state, 'pending')
        assert.deepEqual([viewed.body.approval_state.expired, viewed.body.approval_state.expired_at], [true, cutEnd])
        assert.deepEqual([viewed.body.approvals[0].expires_at, viewed.body.approvals[0].valid, viewed.body.approvals[0].not_counted], [cutEnd, false, 'lapsed'])
        assert.match(renderPlan(viewed.body), new RegExp(`APPROVAL EXPIRED at ${cutEnd.replace(/\./g, '\\.')}`))
        const client = new Client({ name: 'ttl-cut-test', version: '1.0.0' })
        await client.connect(new StreamableHTTPClientTransport(new URL(`${slow.base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${fx.tokens.agent}` } } }))
        try {
          const got = await callTool(client, 'get_plan', { plan_id: stale.plan_id })
          assert.equal(got.structuredContent.approvals[0].expires_at, cutEnd)
          assert.match(got.content.map((c: any) => c.text).join('\n'), new RegExp(`APPROVAL EXPIRED at ${cutEnd.replace(/\./g, '\\.')}`))
        } finally {
          await client.close()
        }
        const page = pagePart(await reviewPageHtml({ base: slow.base, tokens: fx.tokens }, `/review/plans/${stale.plan_id}`), 'approval-expired')
        assert.ok(page.includes(`datetime="${cutEnd}"`), page)

        // the one given 2 minutes ago lasts 3 more by the store's time: shown until the cut, committed on an instance 10 minutes fast
        const fast = await restarted(5, 10 * MINUTE)
        const liveView = await call(fast.base, 'GET', `/v1/plans/${live.plan_id}`, undefined, { authorization: `Bearer ${fx.tokens.agent}` })
        assert.equal(liveView.body.state, 'approved')
        assert.equal(liveView.body.approval_state.approved_by[0].expires_at, plus(liveAt, 5 * MINUTE))
        const committed = await call(fast.base, 'POST', `/v1/plans/${live.plan_id}/commit`, { expected_digest: live.plan_digest }, { authorization: `Bearer ${fx.tokens.agent}`, 'idempotency-key': `ttl-live-${kind}` })
        assert.equal(committed.status, 202, JSON.stringify(committed.body))

        // the TTL put back up (100000 minutes): what lapsed under the cut was refused "a reviewer must approve it again",
        // and stays lapsed; the cut, once applied, is the approval's expiry on every instance (was: approved again)
        const longer = await restarted(100_000, 0)
        const staleLonger = await call(longer.base, 'GET', `/v1/plans/${stale.plan_id}`, undefined, { authorization: `Bearer ${fx.tokens.agent}` })
        assert.equal(staleLonger.body.state, 'pending')
        assert.deepEqual([staleLonger.body.approval_state.expired, staleLonger.body.approval_state.expired_at], [true, cutEnd])
        const staleRefused = await call(longer.base, 'POST', `/v1/plans/${stale.plan_id}/commit`, { expected_digest: stale.plan_digest }, { authorization: `Bearer ${fx.tokens.agent}`, 'idempotency-key': `ttl-restored-${kind}` })
        assert.equal(staleRefused.status, 410, JSON.stringify(staleRefused.body))
        const lapsedRefused = await call(longer.base, 'POST', `/v1/plans/${lapsed.plan_id}/commit`, { expected_digest: lapsed.plan_digest }, { authorization: `Bearer ${fx.tokens.agent}`, 'idempotency-key': `ttl-longer-${kind}` })
        assert.equal(lapsedRefused.status, 410, JSON.stringify(lapsedRefused.body))
        assert.match(lapsedRefused.body.error.message, new RegExp(`expired \\(at ${plus(lapsedAt, 3 * MINUTE).replace(/\./g, '\\.')}\\)`))
        assert.doesNotMatch(lapsedRefused.body.error.message, /shortened/)
        const lapsedView = await call(longer.base, 'GET', `/v1/plans/${lapsed.plan_id}`, undefined, { authorization: `Bearer ${fx.tokens.agent}` })
        assert.equal(lapsedView.body.approvals[0].expires_at, plus(lapsedAt, 3 * MINUTE))
      } finally {
        for (const s of servers) await s.stop()
        for (const g of opened) await g.close()
        await fx.close()
      }
    })
  })
}

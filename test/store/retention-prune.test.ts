import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { PRUNE_ACTION, sweepRetention } from '../../src/gateway/index.js'
import { callTool } from '../mcp/support.js'
import { createCliWorkspace, type CliWorkspace } from '../support/cli-config.js'
import { demoGatewayFor } from '../support/gateway-fixture.js'
import { STORE_KINDS } from '../support/stores.js'

/**
 * Retention (0021): the members of selections expired long ago are pruned, unless a plan stands on them (approved,
 * rejected or pending: evidence of a review, and what the plan's pages render, kept); the selection row is kept, and every read of pruned members says so (410
 * expired, reason members_pruned) instead of an empty list that would read as complete. A dry run changes nothing.
 */
const PAUSE = { type: 'pause_collection', params: { reason: 'retention test' } }
const DAY = 86_400_000
const LONG_AGO = '2001-01-01T00:00:00.000Z'

for (const kind of STORE_KINDS) {
  describe(`retention prunes only what is not evidence, and reads say so (${kind} store)`, () => {
    const env = demoGatewayFor({ store: kind, count: 300 })

    test('evidence survives, the rest is pruned, dry run changes nothing, reads refuse with members_pruned', async () => {
      const { fx } = env
      const agent = fx.as('agent')
      const db = fx.gateway.store.db
      const make = async (filter: object) => (await agent('POST', '/v1/resources/subscriptions/selections', { filter, exclude: [{ rule: 'eu', filter: { region: 'eu' } }] })).body
      const evidence = await make({ status: 'past_due' })
      const rejected = await make({ status: 'active' })
      const plain = await make({ status: 'canceled' })
      const fresh = await make({ status: 'trialing' })
      for (const s of [evidence, rejected, plain, fresh]) assert.ok(s.count > 0, JSON.stringify(s).slice(0, 300))
      const approvedPlan = (await agent('POST', `/v1/selections/${evidence.selection_id}/plans`, { action: PAUSE })).body
      const approved = await fx.as('reviewer')('POST', `/v1/plans/${approvedPlan.plan_id}/approvals`, { decision: 'approve', expected_plan_digest: approvedPlan.plan_digest })
      assert.equal(approved.status, 201, JSON.stringify(approved.body))
      const rejectedPlan = (await agent('POST', `/v1/selections/${rejected.selection_id}/plans`, { action: PAUSE })).body
      const rejection = await fx.as('reviewer')('POST', `/v1/plans/${rejectedPlan.plan_id}/approvals`, { decision: 'reject', expected_plan_digest: rejectedPlan.plan_digest })
      assert.equal(rejection.status, 201, JSON.stringify(rejection.body))
      // three expired long ago; `fresh` expired only now, within the age
      await db.updateTable('selections').set({ expires_at: LONG_AGO }).where('id', 'in', [evidence.selection_id, rejected.selection_id, plain.selection_id]).execute()
      await db.updateTable('selections').set({ expires_at: new Date(Date.now() - 1000).toISOString() }).where('id', '=', fresh.selection_id).execute()
      const rows = async (id: string) => Number((await db.selectFrom('selection_members').select((eb) => eb.fn.countAll().as('n')).where('selection_id', '=', id).executeTakeFirstOrThrow()).n)
      const excludedRows = async (id: string) => Number((await db.selectFrom('selection_exclusions').select((eb) => eb.fn.countAll().as('n')).where('selection_id', '=', id).executeTakeFirstOrThrow()).n)
      const before = await Promise.all([evidence, rejected, plain, fresh].map((s) => rows(s.selection_id)))
      const auditRows = async () => (await db.selectFrom('audit_events').select('seq').where('action', '=', PRUNE_ACTION).execute()).length

      const dry = await sweepRetention(fx.gateway, { olderThanMs: 30 * DAY, dryRun: true, actor: null, surface: 'cli' })
      assert.deepEqual(dry.pruned.map((p) => p.selection_id), [plain.selection_id])
      assert.equal(dry.members, plain.count)
      assert.deepEqual(await Promise.all([evidence, rejected, plain, fresh].map((s) => rows(s.selection_id))), before, 'a dry run deletes nothing')
      assert.equal((await agent('GET', `/v1/selections/${plain.selection_id}/records`)).status, 200)
      assert.equal(await auditRows(), 0, 'a dry run writes no sweep row')

      const swept = await sweepRetention(fx.gateway, { olderThanMs: 30 * DAY, dryRun: false, actor: null, surface: 'cli' })
      assert.deepEqual(swept.pruned.map((p) => p.selection_id), [plain.selection_id])
      assert.equal(swept.members, plain.count)
      assert.ok(swept.excluded > 0, 'their excluded records went too')
      assert.equal(await rows(evidence.selection_id), evidence.count, 'an approved plan keeps its members: evidence')
      assert.equal(await rows(fresh.selection_id), fresh.count, 'expired within the age: kept')
      assert.equal(await rows(rejected.selection_id), rejected.count, 'a rejected plan keeps its members: the rejection was a review of them')
      assert.deepEqual([await rows(plain.selection_id), await excludedRows(plain.selection_id)], [0, 0])
      const audit = await db.selectFrom('audit_events').select(['summary', 'details']).where('action', '=', PRUNE_ACTION).execute()
      assert.equal(audit.length, 1)
      assert.equal(JSON.parse(audit[0]!.summary).members, plain.count)
      assert.deepEqual(JSON.parse(audit[0]!.details!).pruned.map((p: any) => [p.selection_id, p.members]), [[plain.selection_id, plain.count]])

      // every read of the pruned members says so; the header row is kept
      for (const path of ['', '/records', '/export?format=csv', '/export?format=ndjson', '/excluded?rule=eu']) {
        const res = await agent('GET', `/v1/selections/${plain.selection_id}${path}`)
        assert.equal(res.status, 410, `${path}: ${JSON.stringify(res.body).slice(0, 300)}`)
        assert.equal(res.body.error.code, 'expired')
        assert.deepEqual([res.body.error.details.reason, res.body.error.details.pruned_by, res.body.error.details.count], ['members_pruned', 'retention', plain.count])
        assert.match(res.body.error.message, /pruned by retention at/)
      }
      // MCP read_selection, its view and its records part alike
      const client = new Client({ name: 'retention-test', version: '1.0.0' })
      await client.connect(new StreamableHTTPClientTransport(new URL(`${fx.base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${fx.tokens.agent}` } } }))
      try {
        for (const args of [{ selection_id: plain.selection_id }, { selection_id: plain.selection_id, part: 'records' }]) {
          const read = await callTool(client, 'read_selection', args)
          assert.equal(read.isError, true, JSON.stringify(read.structuredContent).slice(0, 300))
          assert.match(JSON.stringify(read.structuredContent ?? read.content), /members_pruned/)
        }
      } finally {
        await client.close()
      }
      const plan = await agent('POST', `/v1/selections/${plain.selection_id}/plans`, { action: PAUSE })
      assert.equal(plan.status, 410)
      assert.match(plan.body.error.message, /were pruned by retention/)
      const header = await db.selectFrom('selections').select(['digest', 'count', 'members_pruned_at']).where('id', '=', plain.selection_id).executeTakeFirstOrThrow()
      assert.deepEqual([header.digest, Number(header.count), header.members_pruned_at], [plain.digest, plain.count, swept.now])
      assert.equal((await agent('GET', `/v1/selections/${evidence.selection_id}/records`)).status, 200, 'evidence still reads')
      // the rejected plan still reads whole: its view and its per-record changes
      const planView = await agent('GET', `/v1/plans/${rejectedPlan.plan_id}`)
      assert.equal(planView.status, 200, JSON.stringify(planView.body).slice(0, 300))
      assert.equal(planView.body.state, 'rejected')
      const changes = await agent('GET', `/v1/plans/${rejectedPlan.plan_id}/changes`)
      assert.equal(changes.status, 200, JSON.stringify(changes.body).slice(0, 300))
      assert.equal(changes.body.changes.length, Math.min(rejected.count, 100))

      const again = await sweepRetention(fx.gateway, { olderThanMs: 30 * DAY, dryRun: false, actor: null, surface: 'cli' })
      assert.deepEqual([again.selections, again.members], [0, 0], 'a second sweep finds nothing left')
    })
  })
}

describe('warrant store prune on the command line', () => {
  let ws: CliWorkspace
  before(async () => {
    ws = await createCliWorkspace({ count: 50 })
  })
  after(async () => {
    await ws?.drop()
  })

  test('a bad --older-than is the caller\'s mistake: exit 2, the option named, nothing opened', async () => {
    for (const bad of ['30', '0d', '99999999d']) {
      const { code, stderr } = await ws.warrant(['store', 'prune', '--older-than', bad])
      assert.equal(code, 2, `${bad}: ${stderr}`)
      assert.match(stderr, /invalid_request: --older-than must be a whole number of days or hours/)
    }
  })

  test('a dry run and a sweep on the config\'s age answer and exit 0', async () => {
    const dry = await ws.warrant(['store', 'prune', '--dry-run'])
    assert.equal(dry.code, 0, dry.stderr)
    assert.match(dry.stdout, /DRY RUN: would prune the members of 0 selection\(s\)/)
    const swept = await ws.warrant(['store', 'prune', '--older-than', '12h', '--json'])
    assert.equal(swept.code, 0, swept.stderr)
    assert.equal(JSON.parse(swept.stdout).dry_run, false)
  })

  test('a bad retention age in the config is a clear config error', async () => {
    const bad = await createCliWorkspace({ count: 10, edit: (raw) => void (raw.retention = { prune_members_after_days: 0 }) })
    try {
      const { code, stderr } = await bad.warrant(['store', 'prune', '--dry-run'])
      assert.equal(code, 2, stderr)
      assert.match(stderr, /retention\.prune_members_after_days.*at least 1 day/s)
    } finally {
      await bad.drop()
    }
  })
})

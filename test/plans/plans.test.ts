import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import BetterSqlite3 from 'better-sqlite3'
import { digestOf, type Actor } from '../../src/contract/index.js'
import { writeSchema } from '../../src/config/index.js'
import { createPlanService, planProposalSchema, planViewSchema, approvalResultSchema, runLimitsOf } from '../../src/plans/index.js'
import { createSelectionService } from '../../src/selections/index.js'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { STORE_KINDS } from '../support/stores.js'

const ARTICLE = {
  filter: { status: 'past_due', region: 'eu' },
  exclude: [
    { rule: 'disputed', filter: { tags: { contains: 'disputed' } } },
    { rule: 'legal_hold', filter: { tags: { contains: 'legal_hold' } } },
  ],
}
const PAUSE = { type: 'pause_collection', params: { reason: 'approved credit hold review' } }
const RESUME = { type: 'resume_collection', params: {} }

function upstream<T>(fx: GatewayFixture, query: string): T[] {
  const db = new BetterSqlite3(fx.upstreamUrl.slice('sqlite:'.length), { readonly: true })
  try {
    return db.prepare(query).all() as T[]
  } finally {
    db.close()
  }
}
const hasTag = (tag: string) => `exists (select 1 from json_each(tags) where value = '${tag}')`
const MEMBERS = `status = 'past_due' and region = 'eu' and not ${hasTag('disputed')} and not ${hasTag('legal_hold')}`

async function select(fx: GatewayFixture, body: unknown, who: 'agent' | 'reviewer' | 'admin' = 'agent'): Promise<any> {
  const res = await fx.as(who)('POST', '/v1/resources/subscriptions/selections', body)
  assert.equal(res.status, 201, JSON.stringify(res.body))
  return res.body
}

async function propose(fx: GatewayFixture, selectionId: string, action: unknown, who: 'agent' | 'reviewer' | 'admin' = 'agent'): Promise<any> {
  const res = await fx.as(who)('POST', `/v1/selections/${selectionId}/plans`, { action })
  assert.ok(res.status === 201 || res.status === 200, JSON.stringify(res.body))
  return res.body
}

const approve = (fx: GatewayFixture, who: 'agent' | 'reviewer' | 'reviewer2' | 'admin', plan: any, extra: Record<string, unknown> = {}) =>
  fx.as(who)('POST', `/v1/plans/${plan.plan_id}/approvals`, { decision: 'approve', expected_plan_digest: plan.plan_digest, comment: 'looks right', ...extra })

for (const kind of STORE_KINDS) {
  describe(`plans and approvals on the demo (${kind} store)`, () => {
    let fx: GatewayFixture
    let selection: any
    let plan: any
    let agent: Actor
    before(async () => {
      fx = await startDemoGateway({ store: kind, count: 3000 })
      selection = await select(fx, ARTICLE)
      plan = await propose(fx, selection.selection_id, PAUSE)
      agent = await fx.gateway.principals.authenticate(fx.tokens.agent, 'http')
    })
    after(async () => {
      await fx?.close()
    })

    test('a plan binds selection, canonical action and environment: digest, before → after summary, precondition, policy', () => {
      planProposalSchema.parse(plan)
      assert.equal(plan.created, true)
      assert.match(plan.plan_id, /^plan_[0-9a-f]{24}$/)
      assert.equal(plan.selection_id, selection.selection_id)
      assert.equal(plan.environment, 'billing-demo (acct 4411, host demo.sqlite (local))')
      assert.deepEqual(plan.action.type, 'pause_collection')
      assert.deepEqual(plan.action.params, PAUSE.params)
      assert.equal(
        plan.plan_digest,
        digestOf({
          selection_digest: selection.digest,
          action: PAUSE,
          action_definition: digestOf(fx.config.resources.subscriptions!.actions.pause_collection),
          resource: 'subscriptions',
          environment: selection.environment,
          run_limits: runLimitsOf(fx.config.execution, fx.config.resources.subscriptions!.connector),
        }),
      )
      assert.deepEqual(plan.run_limits, runLimitsOf(fx.config.execution, fx.config.resources.subscriptions!.connector), 'the stop rules and pacing its run is held to')
      assert.equal(plan.target_count, selection.count)
      assert.equal(plan.expires_at, selection.expires_at)
      // absolute without server.public_url: where the gateway listens (the fixture's server, as `warrant serve` tells it)
      assert.equal(plan.review_url, `${fx.base}/review/plans/${plan.plan_id}`)
      assert.equal(plan.review_hint, null)
      assert.equal(plan.state, 'pending')
      assert.equal(plan.reversible, true)
      assert.deepEqual(plan.approval.required, 'one_reviewer')
      assert.equal(plan.approval.reviewers_needed, 1)
      assert.equal(plan.approval.standing_approval, null)
      assert.match(plan.approval.reason, /one reviewer must approve/)
      assert.doesNotMatch(plan.approval.reason, /nightly/, 'a standing approval with another selector (here: no exclusion rules) is not a candidate')

      const before = upstream<{ collection: string; n: number }>(fx, `select collection, count(*) as n from subscriptions where ${MEMBERS} group by collection`)
      assert.equal(plan.changes.uniform, true)
      const collection = plan.changes.summary.find((s: any) => s.field === 'collection')
      assert.equal(collection.after, 'paused')
      // the members already paused fail the precondition (collection: active) and would be skipped: their values are
      // tallied apart, not as a before of the change nor as "already hold it"
      const paused = before.find((b) => b.collection === 'paused')?.n ?? 0
      assert.ok(paused > 0)
      assert.deepEqual(collection.before, [{ value: 'active', count: selection.count - paused }])
      assert.deepEqual([collection.skipped_before, collection.skipped], [[{ value: 'paused', count: paused }], paused])
      assert.equal(collection.unchanged, 0)
      const reason = plan.changes.summary.find((s: any) => s.field === 'pause_reason')
      assert.equal(reason.after, 'approved credit hold review')
      assert.deepEqual(reason.before, [{ value: '', count: selection.count - paused }], 'a set field that is not a review field still shows its before-value')
      assert.deepEqual(reason.skipped_before, [{ value: '', count: paused }])
      assert.deepEqual(plan.precondition.filter, { status: 'past_due', collection: 'active' })
      assert.equal(plan.precondition.failing_now, before.find((b) => b.collection === 'paused')?.n ?? 0)
    })

    test('per-record changes page by cursor: every target, before from the frozen member', async () => {
      const seen: any[] = []
      let cursor: string | null = null
      do {
        const res = await fx.as('reviewer')('GET', `/v1/plans/${plan.plan_id}/changes?limit=50${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)
        assert.equal(res.status, 200, JSON.stringify(res.body))
        seen.push(...res.body.changes)
        cursor = res.body.next_cursor
      } while (cursor)
      assert.equal(seen.length, plan.target_count)
      const truth = new Map(upstream<{ id: string; collection: string }>(fx, `select id, collection from subscriptions where ${MEMBERS}`).map((r) => [r.id, r.collection]))
      for (const record of seen) {
        assert.deepEqual(record.changes.find((c: any) => c.field === 'collection'), { field: 'collection', before: truth.get(record.id), after: 'paused' })
        assert.deepEqual(record.changes.find((c: any) => c.field === 'pause_reason'), { field: 'pause_reason', before: '', after: PAUSE.params.reason })
      }
    })

    test('the same action again returns the same plan; the article\'s flat action form is the same action', async () => {
      const again = await fx.as('agent')('POST', `/v1/selections/${selection.selection_id}/plans`, { action: PAUSE })
      assert.equal(again.status, 200)
      assert.equal(again.body.created, false)
      assert.equal(again.body.plan_id, plan.plan_id)
      const flat = await fx.as('agent')('POST', `/v1/selections/${selection.selection_id}/plans`, { action: { type: 'pause_collection', reason: PAUSE.params.reason } })
      assert.equal(flat.status, 200)
      assert.equal(flat.body.plan_id, plan.plan_id)
      assert.equal(flat.body.plan_digest, plan.plan_digest)
    })

    const badActions: [string, unknown, RegExp][] = [
      ['an unknown action names the known ones', { type: 'delete_everything' }, /known actions: pause_collection, resume_collection/],
      ['a missing parameter is named', { type: 'pause_collection', params: {} }, /missing parameter\(s\): reason/],
      ['an extra parameter is named', { type: 'pause_collection', params: { reason: 'x', force: true } }, /unknown parameter\(s\): force/],
      ['a wrongly typed parameter is named', { type: 'pause_collection', params: { reason: 42 } }, /reason \(expected string\)/],
    ]
    for (const [name, action, message] of badActions)
      test(`bad action: ${name} (400)`, async () => {
        const res = await fx.as('agent')('POST', `/v1/selections/${selection.selection_id}/plans`, { action })
        assert.equal(res.status, 400, JSON.stringify(res.body))
        assert.equal(res.body.error.code, 'invalid_request')
        assert.match(res.body.error.message, message)
      })

    test('an agent cannot approve (403); the proposer cannot approve its own plan (403); a wrong digest is 409', async () => {
      const byAgent = await approve(fx, 'agent', plan)
      assert.equal(byAgent.status, 403)
      assert.equal(byAgent.body.error.code, 'forbidden')

      const own = await propose(fx, selection.selection_id, RESUME, 'reviewer')
      // The agent did not propose this one: only its role refuses it.
      const byOtherAgent = await approve(fx, 'agent', own)
      assert.equal(byOtherAgent.status, 403)
      assert.equal(byOtherAgent.body.error.code, 'forbidden')
      assert.match(byOtherAgent.body.error.message, /only a reviewer or an admin/)
      const self = await approve(fx, 'reviewer', own)
      assert.equal(self.status, 403)
      assert.equal(self.body.error.code, 'forbidden')
      assert.match(self.body.error.message, /proposed/)

      const wrong = await approve(fx, 'reviewer', plan, { expected_plan_digest: selection.digest })
      assert.equal(wrong.status, 409)
      assert.equal(wrong.body.error.code, 'digest_mismatch')
      const still = await fx.as('agent')('GET', `/v1/plans/${plan.plan_id}`)
      assert.equal(still.body.state, 'pending')
    })

    test('approve → approved_by, approved_at, expires_at (15 min); the plan is approved; one reviewer never counts twice', async () => {
      const res = await approve(fx, 'reviewer', plan)
      assert.equal(res.status, 201, JSON.stringify(res.body))
      approvalResultSchema.parse(res.body)
      const alice = await fx.gateway.principals.authenticate(fx.tokens.reviewer, 'http')
      assert.equal(res.body.approved_by, alice.principal)
      assert.equal(res.body.approved_by_name, 'alice')
      assert.equal(Date.parse(res.body.expires_at) - Date.parse(res.body.approved_at), 15 * 60_000)
      assert.equal(res.body.plan_digest, plan.plan_digest)
      assert.equal(res.body.selection_digest, selection.digest)
      assert.deepEqual(res.body.action.precondition, { status: 'past_due', collection: 'active' })
      assert.equal(res.body.plan_state, 'approved')
      assert.equal(res.body.counted, true)

      const view = await fx.as('agent')('GET', `/v1/plans/${plan.plan_id}`)
      planViewSchema.parse(view.body)
      assert.equal(view.body.state, 'approved')
      assert.equal(view.body.approval_state.approved, true)
      assert.deepEqual(view.body.approval_state.approved_by.map((a: any) => a.name), ['alice'])
      assert.equal(view.body.approval_state.still_needed, 0)
      assert.equal(view.body.approvals[0].valid, true)

      const twice = await approve(fx, 'reviewer', plan)
      assert.equal(twice.status, 200, 'nothing new recorded: the approval that stands')
      assert.equal(twice.body.counted, false)
      assert.deepEqual([twice.body.approval_id, twice.body.expires_at], [res.body.approval_id, res.body.expires_at])
      assert.equal((await fx.as('agent')('GET', `/v1/plans/${plan.plan_id}`)).body.approvals.length, 1)

      const committable = await fx.gateway.plans.assertCommittable(agent, plan.plan_id, plan.plan_digest)
      assert.equal(committable.plan.plan_id, plan.plan_id)
      assert.deepEqual(committable.approvals.map((a) => a.principal), [alice.principal])
      assert.equal(committable.selection.digest, selection.digest)
      assert.equal(committable.actionConfig.set.collection, 'paused')
      // the article's bulk-actions form names the selection digest
      await fx.gateway.plans.assertCommittable(agent, plan.plan_id, selection.digest)
      await assert.rejects(fx.gateway.plans.assertCommittable(agent, plan.plan_id, 'sha256:0000'), (e: any) => e.code === 'digest_mismatch')
      const found = await fx.gateway.plans.findBySelectionAndAction(agent, selection.selection_id, { type: 'pause_collection', params: PAUSE.params })
      assert.equal(found?.plan_id, plan.plan_id)
    })

    test('an approval is never reused for another action on the same selection', async () => {
      const other = await propose(fx, selection.selection_id, { type: 'resume_collection' })
      assert.notEqual(other.plan_id, plan.plan_id)
      assert.notEqual(other.plan_digest, plan.plan_digest)
      const view = await fx.as('agent')('GET', `/v1/plans/${other.plan_id}`)
      assert.equal(view.body.state, 'pending')
      assert.deepEqual(view.body.approvals, [])
      await assert.rejects(fx.gateway.plans.assertCommittable(agent, other.plan_id), (e: any) => e.code === 'not_approved' && e.status === 403)
      // presenting the approved plan's digest for the other plan is a mismatch, not an approval
      const reuse = await approve(fx, 'reviewer2', other, { expected_plan_digest: plan.plan_digest })
      assert.equal(reuse.status, 409)
      assert.equal(reuse.body.error.code, 'digest_mismatch')
    })

    test('the write each target receives: params, id and version rendered; expect defaults to every field set', () => {
      const record = { plan_id: plan.plan_id, selection_id: plan.selection_id, resource: 'subscriptions', environment: plan.environment, action: PAUSE, plan_digest: plan.plan_digest, selection_digest: selection.digest, target_count: plan.target_count, state: 'approved' as const, proposed_by: 'x', created_at: plan.created_at }
      const config = fx.gateway.plans.actionConfigOf(record)
      const write = fx.gateway.plans.renderWrite(record, config, { id: 'sub_00004', version: '1' })
      assert.deepEqual(write.set, { collection: 'paused', pause_reason: PAUSE.params.reason })
      assert.deepEqual(write.expect, { status: [200, 201, 204], fields: { collection: 'paused', pause_reason: PAUSE.params.reason } })
      assert.deepEqual(write.precondition, { status: 'past_due', collection: 'active' })
      assert.equal(write.http, undefined)
      const http = fx.gateway.plans.renderWrite(record, { ...config, write: writeSchema.parse({ method: 'PATCH', path: '/subs/{id}/pause/{{params.reason}}', body: { state: '{{set.collection}}', note: 'v{{version}} {{id}}' }, if_match: true }) }, { id: 'a/b', version: '7' })
      assert.deepEqual(http.http, { method: 'PATCH', path: '/subs/a%2Fb/pause/approved%20credit%20hold%20review', body: { state: 'paused', note: 'v7 a/b' }, ifMatch: true, style: 'patch', version: { in: 'header', name: 'If-Match' } })
    })

    test('a rejected plan takes no more decisions (409); commit then refuses it', async () => {
      const small = await select(fx, { filter: { status: 'past_due', region: 'apac' } })
      const doomed = await propose(fx, small.selection_id, PAUSE)
      const no = await approve(fx, 'reviewer', doomed, { decision: 'reject', comment: 'wrong region' })
      assert.equal(no.status, 201)
      assert.equal(no.body.plan_state, 'rejected')
      assert.equal(no.body.approved_by, null)
      const late = await approve(fx, 'reviewer2', doomed)
      assert.equal(late.status, 409)
      assert.equal(late.body.error.code, 'conflict')
      await assert.rejects(fx.gateway.plans.assertCommittable(agent, doomed.plan_id), (e: any) => e.code === 'conflict')
      const view = await fx.as('agent')('GET', `/v1/plans/${doomed.plan_id}`)
      assert.equal(view.body.state, 'rejected')
      assert.equal(view.body.approval_state.rejected_by.name, 'alice')
    })

    test('a committed plan is marked once; after that it takes no decision and is not committable again', async () => {
      const small = await select(fx, { filter: { status: 'past_due', region: 'us', amount_due: { gte: 4000 } } })
      const p = await propose(fx, small.selection_id, PAUSE)
      assert.equal((await approve(fx, 'reviewer', p)).status, 201)
      await fx.gateway.plans.assertCommittable(agent, p.plan_id, p.plan_digest)
      await fx.gateway.plans.markCommitted(p.plan_id)
      await assert.rejects(fx.gateway.plans.markCommitted(p.plan_id), (e: any) => e.code === 'conflict')
      await assert.rejects(fx.gateway.plans.assertCommittable(agent, p.plan_id, p.plan_digest), (e: any) => e.code === 'conflict')
      const late = await approve(fx, 'reviewer2', p)
      assert.equal(late.status, 409)
      assert.equal((await fx.as('agent')('GET', `/v1/plans/${p.plan_id}`)).body.state, 'committed')
    })

    test('an incomplete selection: a plan on it can be proposed and reviewed, but approval and commit are refused with 409 selection_incomplete', async () => {
      const partial = await select(fx, { filter: { region: 'eu' }, page_size: 50, budget: { max_pages: 1 } })
      assert.equal(partial.complete, false)
      const res = await fx.as('agent')('POST', `/v1/selections/${partial.selection_id}/plans`, { action: PAUSE })
      assert.equal(res.status, 201)
      assert.equal(res.body.selection.complete, false)
      assert.match(res.body.approval_state.who_can_approve, /^nobody: the selection is incomplete/)
      const early = await approve(fx, 'reviewer', res.body)
      assert.equal(early.status, 409)
      assert.equal(early.body.error.code, 'selection_incomplete')
      assert.match(early.body.error.message, /CLIENT_LIMIT_REACHED/)
      assert.equal(early.body.error.details.recovery_path, `/v1/selections/${partial.selection_id}/recover`)
      await assert.rejects(fx.gateway.plans.assertCommittable(agent, res.body.plan_id), (e: any) => e.code === 'selection_incomplete')

      // a plan whose selection turns out incomplete (here: marked so behind the API's back) cannot be approved
      const complete = await select(fx, { filter: { region: 'apac', status: 'trialing' } })
      const p = await propose(fx, complete.selection_id, RESUME)
      await fx.gateway.store.db.updateTable('selections').set({ complete: 0 }).where('id', '=', complete.selection_id).execute()
      const refused = await approve(fx, 'reviewer', p)
      assert.equal(refused.status, 409)
      assert.equal(refused.body.error.code, 'selection_incomplete')
      await assert.rejects(fx.gateway.plans.assertCommittable(agent, p.plan_id), (e: any) => e.code === 'selection_incomplete')
    })

    // moved by the injected clock, the store's on SQLite; on PostgreSQL the database's (test/plans/approval-clock-skew.test.ts)
    test('expiry, on a clock: an approval lapses after 15 minutes (410); a selection after 30 takes its plan and approvals with it (410)', { skip: kind === 'postgres' && 'the store\'s clock is the database\'s: no injected clock moves it' }, async () => {
      let now = Date.now()
      const clock = () => new Date(now)
      const minutes = (n: number) => {
        now += n * 60_000
      }
      const gw = fx.gateway
      const selections = createSelectionService({ store: gw.store, catalogue: gw.catalogue, cursorCodec: gw.cursorCodec, clock, defaultTtlMinutes: 30 })
      const plans = createPlanService({ store: gw.store, catalogue: gw.catalogue, selections, execution: gw.config.execution, clock, cursorCodec: gw.cursorCodec })
      const reviewer = await gw.principals.authenticate(fx.tokens.reviewer, 'http')
      const reviewer2 = await gw.principals.authenticate(fx.tokens.reviewer2, 'http')

      const sel = await selections.create(agent, 'subscriptions', { filter: { status: 'canceled', region: 'apac' } })
      const p = await plans.propose(agent, sel.selection_id, { action: RESUME })
      minutes(5)
      const first = await plans.decide(reviewer, p.plan_id, { decision: 'approve', expected_plan_digest: p.plan_digest })
      assert.equal(Date.parse(first.expires_at!), now + 15 * 60_000)
      minutes(10)
      await plans.assertCommittable(agent, p.plan_id, p.plan_digest)
      minutes(6) // 21 minutes: the approval lapsed at 20
      await assert.rejects(plans.assertCommittable(agent, p.plan_id, p.plan_digest), (e: any) => e.code === 'expired' && e.status === 410)
      assert.equal((await plans.view(agent, p.plan_id)).state, 'pending')
      const second = await plans.decide(reviewer2, p.plan_id, { decision: 'approve', expected_plan_digest: p.plan_digest })
      assert.equal(second.expires_at, sel.expires_at, 'an approval never outlives its selection')
      await plans.assertCommittable(agent, p.plan_id, p.plan_digest)
      minutes(10) // 31 minutes: the selection expired at 30
      assert.equal((await selections.view(agent, sel.selection_id)).state, 'expired')
      assert.equal((await plans.view(agent, p.plan_id)).state, 'expired')
      await assert.rejects(plans.assertCommittable(agent, p.plan_id, p.plan_digest), (e: any) => e.code === 'expired' && e.status === 410)
      await assert.rejects(
        plans.decide(reviewer, p.plan_id, { decision: 'approve', expected_plan_digest: p.plan_digest }),
        (e: any) => e.code === 'expired' && e.status === 410,
      )
      await assert.rejects(plans.propose(agent, sel.selection_id, { action: PAUSE }), (e: any) => e.code === 'expired')
    })

    test('over HTTP: once its selection has expired, a plan answers 410 to an approval', async () => {
      const sel = await select(fx, { filter: { status: 'trialing', region: 'apac' } })
      const p = await propose(fx, sel.selection_id, PAUSE)
      // time passes: the selection's expiry is now in the past
      await fx.gateway.store.db.updateTable('selections').set({ expires_at: new Date(Date.now() - 1000).toISOString() }).where('id', '=', sel.selection_id).execute()
      const res = await approve(fx, 'reviewer', p)
      assert.equal(res.status, 410)
      assert.equal(res.body.error.code, 'expired')
      assert.equal((await fx.as('agent')('GET', `/v1/plans/${p.plan_id}`)).body.state, 'expired')
      assert.equal((await fx.as('agent')('GET', `/v1/selections/${sel.selection_id}`)).body.committable, false)
    })

    test('a compensation plan restores before-values per target, with "still holds what we wrote" as its precondition, and needs approval', async () => {
      const source = await fx.gateway.plans.load(agent, plan.plan_id)
      const targets = [
        { id: 'sub_00011', before: { collection: 'active', pause_reason: '' }, after: { collection: 'paused', pause_reason: PAUSE.params.reason }, version: '2' },
        { id: 'sub_00004', before: { collection: 'paused', pause_reason: 'old' }, after: { collection: 'paused', pause_reason: PAUSE.params.reason }, version: '5' },
      ]
      const comp = await fx.gateway.plans.proposeCompensation(agent, 'op_test', source, targets)
      assert.equal(comp.compensates, 'op_test')
      assert.equal(comp.action.type, 'compensate')
      assert.equal(comp.target_count, 2)
      assert.equal(comp.state, 'pending')
      assert.equal(comp.approval.required, 'one_reviewer')
      assert.equal(comp.changes.uniform, false)
      const csel = await fx.gateway.selections.view(agent, comp.selection_id)
      assert.equal(csel.complete, true)
      assert.equal(csel.compensation_of, 'op_test')
      assert.deepEqual(csel.records.map((r) => [r.id, r.version]), [['sub_00004', '5'], ['sub_00011', '2']])
      assert.equal(csel.digest, digestOf([{ id: 'sub_00004', version: '5' }, { id: 'sub_00011', version: '2' }]))

      const record = await fx.gateway.plans.load(agent, comp.plan_id)
      const config = fx.gateway.plans.actionConfigOf(record)
      const w = fx.gateway.plans.renderWrite(record, config, { id: 'sub_00011', version: '2' })
      assert.deepEqual(w.set, { collection: 'active', pause_reason: '' })
      assert.deepEqual(w.precondition, { collection: 'paused', pause_reason: PAUSE.params.reason })
      assert.deepEqual(w.expect.fields, { collection: 'active', pause_reason: '' })
      assert.throws(() => fx.gateway.plans.renderWrite(record, config, { id: 'sub_99999', version: '1' }))

      const changes = await fx.as('reviewer')('GET', `/v1/plans/${comp.plan_id}/changes`)
      assert.deepEqual(changes.body.changes.find((c: any) => c.id === 'sub_00004').changes, [
        { field: 'collection', before: 'paused', after: 'paused' },
        { field: 'pause_reason', before: PAUSE.params.reason, after: 'old' },
      ])
      // its digest covers the per-target values
      const other = await fx.gateway.plans.proposeCompensation(agent, 'op_test', source, [targets[0]!, { ...targets[1]!, before: { collection: 'paused', pause_reason: 'different' } }])
      assert.notEqual(other.plan_digest, comp.plan_digest)
      await assert.rejects(fx.gateway.plans.assertCommittable(agent, comp.plan_id), (e: any) => e.code === 'not_approved')
      const ok = await approve(fx, 'reviewer', comp)
      assert.equal(ok.status, 201)
      const committable = await fx.gateway.plans.assertCommittable(agent, comp.plan_id, comp.plan_digest)
      assert.equal(committable.plan.compensates, 'op_test')
    })
  })

  describe(`approval policy: two reviewers, standing approvals (${kind} store)`, () => {
    let fx: GatewayFixture
    let agent: Actor
    before(async () => {
      fx = await startDemoGateway({
        store: kind,
        count: 30,
        edit: (raw) => {
          raw.resources.subscriptions.approval.two_reviewers_above = 5
          raw.resources.subscriptions.standing_approvals.push({
            name: 'nightly-small-past-due-eu',
            selector: { status: 'past_due', region: 'eu' },
            action: 'pause_collection',
            max_count: 25,
            flagged: { tags: { contains: 'enterprise' } },
          })
          raw.resources.subscriptions.standing_approvals.push({
            name: 'globex-past-due-eu',
            selector: { status: 'past_due', region: 'eu', tenant: 'globex' },
            action: 'pause_collection',
            max_count: 25,
            flagged: { tags: { contains: 'enterprise' } },
          })
        },
      })
      agent = await fx.gateway.principals.authenticate(fx.tokens.agent, 'http')
    })
    after(async () => {
      await fx?.close()
    })

    test('a small selection matching a standing selector, with no flagged member, needs no review', async () => {
      const sel = await select(fx, { filter: { region: 'eu', tenant: 'globex', status: 'past_due' } })
      assert.ok(sel.count >= 1 && sel.count <= 25)
      assert.ok(sel.records.every((r: any) => !r.fields.tags.includes('enterprise')))
      const p = await propose(fx, sel.selection_id, PAUSE)
      assert.equal(p.approval.required, 'none')
      assert.equal(p.approval.standing_approval, 'globex-past-due-eu')
      assert.equal(p.approval.reviewers_needed, 0)
      assert.equal(p.state, 'approved')
      const committable = await fx.gateway.plans.assertCommittable(agent, p.plan_id, p.plan_digest)
      assert.equal(committable.standing_approval, 'globex-past-due-eu')
      assert.deepEqual(committable.approvals, [])
      // another action on the same selection is not covered
      const other = await propose(fx, sel.selection_id, RESUME)
      assert.equal(other.approval.required, 'one_reviewer')
    })

    test('a selection matching the standing selector but holding an enterprise-tagged member needs review, and says why', async () => {
      const sel = await select(fx, { filter: { status: 'past_due', region: 'eu' } })
      const flagged = upstream<{ id: string }>(fx, `select id from subscriptions where status = 'past_due' and region = 'eu' and ${hasTag('enterprise')} order by id`)
      assert.ok(flagged.length > 0 && sel.count <= 25)
      const p = await propose(fx, sel.selection_id, PAUSE)
      assert.notEqual(p.approval.required, 'none')
      assert.equal(p.approval.standing_approval, null)
      assert.match(p.approval.reason, new RegExp(`nightly-small-past-due-eu" does not apply: ${flagged.length} member\\(s\\) match its flagged filter`))
      assert.ok(flagged.every((f) => p.approval.reason.includes(f.id)))
      await assert.rejects(fx.gateway.plans.assertCommittable(agent, p.plan_id), (e: any) => e.code === 'not_approved')
    })

    test('above two_reviewers_above, two distinct reviewers must approve; the same one twice does not count', async () => {
      const sel = await select(fx, { filter: { region: 'us' } })
      assert.ok(sel.count > 5)
      const p = await propose(fx, sel.selection_id, RESUME)
      assert.equal(p.approval.required, 'two_reviewers')
      assert.equal(p.approval.reviewers_needed, 2)
      const one = await approve(fx, 'reviewer', p)
      assert.equal(one.body.plan_state, 'pending')
      assert.equal(one.body.still_needed, 1)
      const same = await approve(fx, 'reviewer', p)
      assert.equal(same.status, 200)
      assert.equal(same.body.counted, false)
      assert.equal(same.body.approval_id, one.body.approval_id)
      assert.equal(same.body.plan_state, 'pending')
      await assert.rejects(fx.gateway.plans.assertCommittable(agent, p.plan_id), (e: any) => e.code === 'not_approved' && /needs 2/.test(e.message))
      const view = await fx.as('agent')('GET', `/v1/plans/${p.plan_id}`)
      assert.equal(view.body.approval_state.still_needed, 1)
      assert.deepEqual(view.body.approval_state.approved_by.map((a: any) => a.name), ['alice'])
      const two = await approve(fx, 'reviewer2', p)
      assert.equal(two.body.plan_state, 'approved')
      assert.equal(two.body.still_needed, 0)
      const committable = await fx.gateway.plans.assertCommittable(agent, p.plan_id, p.plan_digest)
      assert.equal(committable.approvals.length, 2)
    })

    test('a double click: two approvals by one reviewer at once are one row, one id, one count', async () => {
      const sel = await select(fx, { filter: { region: 'us' } })
      const p = await propose(fx, sel.selection_id, RESUME)
      assert.equal(p.approval.reviewers_needed, 2)
      const both = await Promise.all([approve(fx, 'reviewer', p), approve(fx, 'reviewer', p)])
      assert.deepEqual(both.map((r) => r.status).sort(), [200, 201], JSON.stringify(both.map((r) => r.body)))
      assert.equal(both[0]!.body.approval_id, both[1]!.body.approval_id)
      const view = await fx.as('agent')('GET', `/v1/plans/${p.plan_id}`)
      assert.equal(view.body.approvals.length, 1)
      assert.equal(view.body.state, 'pending')
      assert.equal(view.body.approval_state.still_needed, 1)
    })
  })
}

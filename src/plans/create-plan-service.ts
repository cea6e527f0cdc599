import { randomBytes } from 'node:crypto'
import { sql } from 'kysely'
import {
  type Actor,
  type Filter,
  SYSTEM_ACTOR,
  WarrantError,
  canonicalJson,
  clausesOf,
  digestOf,
  inScope,
  matchesFilter,
} from '../contract/index.js'
import type { ActionConfig, ResourceConfig } from '../config/index.js'
import { createCursorCodec, type CursorCodec } from '../inventory/index.js'
import type { Catalogue, Resource } from '../resources/index.js'
import { createPageCursors } from '../selections/page-cursor.js'
import { parseRequest } from '../selections/parse-request.js'
import type { SelectionMember, SelectionRecord, SelectionService } from '../selections/selection-service.js'
import type { PlanRow, Store } from '../store/index.js'
import type { ActionRequest, CommittablePlan, CompensationTargetInput, PlanRecord, PlanService, RenderedWrite } from './plan-service.js'
import { renderPath, renderValue, type TemplateContext } from './render.js'
import {
  type ApprovalPolicy,
  type ApprovalResult,
  type ChangesPage,
  type PlanProposal,
  type PlanView,
  actionRequestSchema,
  approvalRequestSchema,
} from './schemas.js'

export interface PlanServiceOptions {
  readonly store: Store
  readonly catalogue: Catalogue
  readonly selections: SelectionService
  /** Signs the cursors of `/changes` pages; default: a key of this process (cursors then die with it). */
  readonly cursorCodec?: CursorCodec
  /** Default: the store's clock. */
  readonly clock?: () => Date
}

/** The action type of compensation plans. */
export const COMPENSATE = 'compensate'
/** Distinct values listed per field in a change summary. */
const SUMMARY_VALUES_MAX = 50
const MEMBER_PAGE = 1000

type CanonicalAction = { readonly type: string; readonly params: Readonly<Record<string, unknown>> }

/** The policy as stored on the plan: what the reviewer is told, and what a commit re-checks. */
interface StoredPolicy extends ApprovalPolicy {
  /** sha256 of the action's configuration when proposed: a commit refuses a plan whose action was redefined. */
  readonly action_definition_digest: string
}

interface StoredChanges {
  readonly summary: PlanView['changes']['summary']
  readonly uniform: boolean
  readonly failing_now: number | null
}

interface ApprovalEntry {
  readonly approval_id: string
  readonly decision: 'approve' | 'reject'
  readonly principal: string
  readonly name: string | null
  readonly comment: string | null
  readonly decided_at: string
  readonly expires_at: string | null
  readonly plan_digest: string
  readonly valid: boolean
}

/**
 * Plans and approvals: the action catalogue, before → after for every target, the plan digest, the approval
 * policy (one or two distinct reviewers, standing approvals), and the rules a commit must pass.
 *
 * @example
 * const plans = createPlanService({ store, catalogue, selections })
 * const plan = await plans.propose(agent, selectionId, { action: { type: 'pause_collection', params: { reason: 'credit hold' } } })
 * await plans.decide(reviewer, plan.plan_id, { decision: 'approve', expected_plan_digest: plan.plan_digest })
 */
export function createPlanService(options: PlanServiceOptions): PlanService {
  const { store, catalogue, selections } = options
  const db = store.db
  const clock = options.clock ?? (() => new Date(store.now()))
  const nowIso = () => clock().toISOString()
  const cursors = createPageCursors(options.cursorCodec ?? createCursorCodec({ key: randomBytes(32) }))

  // ---------- loading ----------

  async function loadRow(planId: string): Promise<PlanRow> {
    const row = await db.selectFrom('plans').selectAll().where('id', '=', planId).executeTakeFirst()
    if (!row) throw new WarrantError('not_found', `no plan "${planId}"`, { plan_id: planId })
    return row
  }

  const scoped = (actor: Actor, resource: string, action?: string) => {
    if (!inScope(actor, resource)) throw new WarrantError('forbidden', `resource "${resource}" is outside this principal's scope`, { resource })
    if (action !== undefined && !inScope(actor, resource, action))
      throw new WarrantError('forbidden', `action "${action}" on "${resource}" is outside this principal's scope`, { resource, action })
  }

  function toRecord(row: PlanRow, state: PlanRecord['state'] = row.state): PlanRecord {
    return {
      plan_id: row.id,
      selection_id: row.selection_id,
      resource: row.resource,
      environment: row.environment,
      action: JSON.parse(row.action) as CanonicalAction,
      plan_digest: row.plan_digest,
      selection_digest: row.selection_digest,
      target_count: Number(row.target_count),
      state,
      proposed_by: row.proposed_by,
      created_at: row.created_at,
      compensates: row.compensates,
    }
  }

  /** The selection behind a plan, read on the plan's behalf (the caller has checked its own scope on the plan). */
  async function selectionOf(row: PlanRow): Promise<SelectionRecord> {
    return selections.load(SYSTEM_ACTOR, row.selection_id)
  }

  async function approvalsOf(row: PlanRow, now: string): Promise<ApprovalEntry[]> {
    const rows = await db
      .selectFrom('approvals')
      .leftJoin('principals', 'principals.id', 'approvals.principal')
      .select([
        'approvals.id as id',
        'approvals.decision as decision',
        'approvals.principal as principal',
        'approvals.comment as comment',
        'approvals.decided_at as decided_at',
        'approvals.expires_at as expires_at',
        'approvals.plan_digest as plan_digest',
        'principals.name as name',
        'principals.role as role',
        'principals.disabled_at as disabled_at',
      ])
      .where('approvals.plan_id', '=', row.id)
      .orderBy('approvals.decided_at')
      .orderBy('approvals.id')
      .execute()
    return rows.map((r) => ({
      approval_id: r.id,
      decision: r.decision,
      principal: r.principal,
      name: r.name ?? null,
      comment: r.comment,
      decided_at: r.decided_at,
      expires_at: r.expires_at,
      plan_digest: r.plan_digest,
      valid:
        r.decision === 'approve' &&
        r.plan_digest === row.plan_digest &&
        r.principal !== row.proposed_by &&
        (r.role === 'reviewer' || r.role === 'admin') &&
        !r.disabled_at &&
        r.expires_at !== null &&
        r.expires_at > now,
    }))
  }

  /** Distinct principals with a valid approval, earliest first. */
  const distinctApprovers = (entries: readonly ApprovalEntry[]) => {
    const seen = new Map<string, ApprovalEntry>()
    for (const e of entries) if (e.valid) seen.set(e.principal, e)
    return [...seen.values()]
  }

  function effectiveState(row: PlanRow, selection: SelectionRecord, policy: StoredPolicy, entries: readonly ApprovalEntry[], now: string): PlanRecord['state'] {
    if (row.state === 'rejected' || row.state === 'committed') return row.state
    if (selection.expires_at <= now) return 'expired'
    return distinctApprovers(entries).length >= policy.reviewers_needed ? 'approved' : 'pending'
  }

  // ---------- actions ----------

  function normaliseAction(input: unknown): ActionRequest & { readonly params: Readonly<Record<string, string | number | boolean>> } {
    const parsed = parseRequest(actionRequestSchema, input, 'action')
    const { type, params = {}, ...flat } = parsed as { type: string; params?: Record<string, string | number | boolean> } & Record<string, string | number | boolean>
    const merged: Record<string, string | number | boolean> = { ...params }
    for (const [k, v] of Object.entries(flat)) {
      if (Object.hasOwn(merged, k) && merged[k] !== v)
        throw new WarrantError('invalid_request', `action parameter "${k}" is given twice with different values (in params and beside type)`, { param: k })
      merged[k] = v
    }
    return { type, params: merged }
  }

  /** The validated, canonical `{type, params}` of a configured action. */
  function canonicalActionOf(resource: Resource, input: unknown): { action: CanonicalAction; config: ActionConfig } {
    const { type, params } = normaliseAction(input)
    const actions = resource.config.actions
    const known = Object.keys(actions)
    const config = Object.hasOwn(actions, type) ? actions[type] : undefined
    if (!config) {
      if (type === COMPENSATE)
        throw new WarrantError('invalid_request', 'a compensation plan is proposed from an operation (POST /v1/operations/{id}/compensation), not on a selection', { action: type })
      throw new WarrantError('invalid_request', `unknown action "${type}" for resource "${resource.name}"; known actions: ${known.join(', ') || '(none)'}`, { action: type, known })
    }
    const missing: string[] = []
    const unexpected: string[] = []
    const wrongType: { param: string; expected: string }[] = []
    for (const [name, spec] of Object.entries(config.params)) {
      if (!Object.hasOwn(params, name)) {
        if (spec.required) missing.push(name)
        continue
      }
      if (typeof params[name] !== spec.type) wrongType.push({ param: name, expected: spec.type })
    }
    for (const name of Object.keys(params)) if (!Object.hasOwn(config.params, name)) unexpected.push(name)
    if (missing.length + unexpected.length + wrongType.length > 0) {
      const parts = [
        missing.length ? `missing parameter(s): ${missing.join(', ')}` : '',
        unexpected.length ? `unknown parameter(s): ${unexpected.join(', ')} (declared: ${Object.keys(config.params).join(', ') || 'none'})` : '',
        wrongType.length ? `wrongly typed: ${wrongType.map((w) => `${w.param} (expected ${w.expected})`).join(', ')}` : '',
      ].filter(Boolean)
      throw new WarrantError('invalid_request', `action "${type}": ${parts.join('; ')}`, { action: type, missing, unexpected, wrong_type: wrongType })
    }
    const sorted = Object.fromEntries(Object.keys(params).sort().map((k) => [k, params[k]]))
    return { action: { type, params: sorted }, config }
  }

  /** The action config a plan executes. */
  function actionConfigOf(plan: PlanRecord): ActionConfig {
    const resource = catalogue.get(plan.resource)
    if (plan.compensates) return compensationConfig(resource.config, plan)
    const config = Object.hasOwn(resource.config.actions, plan.action.type) ? resource.config.actions[plan.action.type] : undefined
    if (!config)
      throw new WarrantError('conflict', `action "${plan.action.type}" is no longer configured on "${plan.resource}"; the plan cannot run`, { action: plan.action.type })
    return config
  }

  function renderWrite(plan: PlanRecord, actionConfig: ActionConfig, target: { readonly id: string; readonly version: string | null }): RenderedWrite {
    if (plan.compensates) return renderCompensation(plan, actionConfig, target)
    const base: TemplateContext = { id: target.id, version: target.version, params: plan.action.params }
    const set = renderValue(actionConfig.set, base) as Record<string, unknown>
    const withSet: TemplateContext = { ...base, set }
    const write = actionConfig.write
    return {
      set,
      ...(write
        ? { http: { method: write.method, path: renderPath(write.path, withSet), ...(write.body === undefined ? {} : { body: renderValue(write.body, withSet) }), ifMatch: write.if_match } }
        : {}),
      expect: { status: actionConfig.expect.status, fields: actionConfig.expect.fields ? (renderValue(actionConfig.expect.fields, withSet) as Record<string, unknown>) : { ...set } },
      precondition: actionConfig.precondition,
    }
  }

  // ---------- proposing ----------

  interface Proposal {
    readonly actor: Actor
    readonly resource: Resource
    readonly selection: SelectionRecord
    readonly action: CanonicalAction
    readonly config: ActionConfig
    readonly compensates: string | null
  }

  async function existingPlan(selectionId: string, action: CanonicalAction): Promise<PlanRow | undefined> {
    return db
      .selectFrom('plans')
      .selectAll()
      .where('selection_id', '=', selectionId)
      .where('action_type', '=', action.type)
      .where('action', '=', canonicalJson(action))
      .orderBy('created_at')
      .orderBy('id')
      .executeTakeFirst()
  }

  async function createPlan(p: Proposal): Promise<PlanProposal> {
    const existing = await existingPlan(p.selection.selection_id, p.action)
    if (existing) return { ...(await viewOf(existing)), created: false }

    const plan: PlanRecord = {
      plan_id: `plan_${randomBytes(12).toString('hex')}`,
      selection_id: p.selection.selection_id,
      resource: p.resource.name,
      environment: p.selection.environment,
      action: p.action,
      plan_digest: digestOf({ selection_digest: p.selection.digest, action: p.action, resource: p.resource.name, environment: p.selection.environment }),
      selection_digest: p.selection.digest,
      target_count: p.selection.count,
      state: 'pending',
      proposed_by: p.actor.principal,
      created_at: nowIso(),
      compensates: p.compensates,
    }
    const analysis = await analyse(p, plan)
    const policy: StoredPolicy = { ...analysis.policy, action_definition_digest: digestOf(p.config) }
    await db
      .insertInto('plans')
      .values({
        id: plan.plan_id,
        selection_id: plan.selection_id,
        resource: plan.resource,
        environment: plan.environment,
        action: canonicalJson(plan.action),
        action_type: plan.action.type,
        plan_digest: plan.plan_digest,
        selection_digest: plan.selection_digest,
        target_count: plan.target_count,
        changes_summary: JSON.stringify(analysis.changes),
        policy: JSON.stringify(policy),
        state: policy.reviewers_needed === 0 ? 'approved' : 'pending',
        proposed_by: plan.proposed_by,
        created_at: plan.created_at,
        expires_at: p.selection.expires_at,
        compensates: plan.compensates ?? null,
      })
      .execute()
    return { ...(await viewOf(await loadRow(plan.plan_id))), created: true }
  }

  /**
   * One pass over the frozen members: before → after per field, how many already fail the precondition,
   * and whether a standing approval covers the plan (no flagged member).
   */
  async function analyse(p: Proposal, plan: PlanRecord): Promise<{ changes: StoredChanges; policy: ApprovalPolicy }> {
    const tallies = new Map<string, FieldTally>()
    const precondition = p.compensates ? null : p.config.precondition
    let failing: number | null = precondition === null ? null : 0
    const candidates = p.compensates ? [] : standingCandidates(p.resource.config, p.selection, p.action.type)
    const flagged = new Map<string, { count: number; sample: string[] }>()
    for (const c of candidates) flagged.set(c.name, { count: 0, sample: [] })

    await forEachMember(p.selection.selection_id, (member) => {
      const rendered = renderWrite(plan, p.config, { id: member.id, version: member.version })
      for (const [field, after] of Object.entries(rendered.set)) {
        let tally = tallies.get(field)
        if (!tally) tallies.set(field, (tally = new FieldTally()))
        tally.add(member.fields[field], after)
      }
      if (precondition !== null && failing !== null) {
        if (clausesOf(precondition).every((c) => c.field in member.fields)) {
          if (!matchesFilter(member.fields, precondition)) failing += 1
        } else failing = null
      }
      for (const c of candidates) {
        if (c.flagged && matchesFilter(member.fields, c.flagged)) {
          const f = flagged.get(c.name)!
          f.count += 1
          if (f.sample.length < 10) f.sample.push(member.id)
        }
      }
    })

    const summary = [...tallies.entries()].map(([field, t]) => t.summary(field))
    const uniform = summary.every((s) => s.after_values === undefined)
    return { changes: { summary, uniform, failing_now: failing }, policy: decidePolicy(p, candidates, flagged) }
  }

  function decidePolicy(p: Proposal, candidates: readonly StandingCandidate[], flagged: ReadonlyMap<string, { count: number; sample: string[] }>): ApprovalPolicy {
    const ttl = p.resource.config.approval.ttl_minutes
    const count = p.selection.count
    const notes: string[] = []
    for (const c of candidates) {
      const f = flagged.get(c.name)!
      if (count > c.max_count) notes.push(`standing approval "${c.name}" does not apply: ${count} targets, above its max_count of ${c.max_count}`)
      else if (f.count > 0)
        notes.push(`standing approval "${c.name}" does not apply: ${f.count} member(s) match its flagged filter ${JSON.stringify(c.flagged)} (${f.sample.join(', ')}${f.count > f.sample.length ? ', …' : ''})`)
      else
        return {
          required: 'none',
          reviewers_needed: 0,
          reason: `standing approval "${c.name}": the selector and action match it, ${count} target(s) is within its max_count of ${c.max_count}, and no member is flagged`,
          standing_approval: c.name,
          ttl_minutes: ttl,
        }
    }
    const above = p.resource.config.approval.two_reviewers_above
    const base =
      above !== undefined && count > above
        ? { required: 'two_reviewers' as const, reviewers_needed: 2, reason: `${count} targets, more than the resource's two_reviewers_above (${above}): two distinct reviewers must approve` }
        : { required: 'one_reviewer' as const, reviewers_needed: 1, reason: `${count} target(s): one reviewer must approve${above !== undefined ? ` (two above ${above})` : ''}` }
    return { ...base, reason: [base.reason, ...notes].join('; '), standing_approval: null, ttl_minutes: ttl }
  }

  async function forEachMember(selectionId: string, visit: (member: SelectionMember) => void): Promise<void> {
    for (let after = 0; ; ) {
      const page = await selections.members(selectionId, after, MEMBER_PAGE)
      for (const m of page) visit(m)
      if (page.length < MEMBER_PAGE) return
      after = page[page.length - 1]!.ord
    }
  }

  // ---------- views ----------

  async function viewOf(row: PlanRow): Promise<PlanView> {
    const now = nowIso()
    const selection = await selectionOf(row)
    const policy = JSON.parse(row.policy) as StoredPolicy
    const changes = JSON.parse(row.changes_summary) as StoredChanges
    const entries = await approvalsOf(row, now)
    const state = effectiveState(row, selection, policy, entries, now)
    const approvers = distinctApprovers(entries)
    const rejection = entries.find((e) => e.decision === 'reject')
    const plan = toRecord(row, state)
    let config: ActionConfig | null = null
    try {
      config = actionConfigOf(plan)
    } catch {
      config = null
    }
    const still = state === 'rejected' || state === 'expired' || state === 'committed' ? 0 : Math.max(0, policy.reviewers_needed - approvers.length)
    return {
      plan_id: row.id,
      selection_id: row.selection_id,
      resource: row.resource,
      environment: row.environment,
      action: { type: plan.action.type, params: displayParams(plan), description: config?.description ?? '(the action is no longer configured)' },
      plan_digest: row.plan_digest,
      selection_digest: row.selection_digest,
      target_count: Number(row.target_count),
      changes: { summary: changes.summary, uniform: changes.uniform, changes_url: `/v1/plans/${row.id}/changes` },
      precondition: { filter: row.compensates ? {} : (config?.precondition ?? {}), failing_now: changes.failing_now, per_target: row.compensates !== null },
      reversible: config?.reversible ?? false,
      approval: { required: policy.required, reviewers_needed: policy.reviewers_needed, reason: policy.reason, standing_approval: policy.standing_approval, ttl_minutes: policy.ttl_minutes },
      approval_state: {
        approved: state === 'approved' || state === 'committed',
        approved_by: approvers.map((a) => ({ principal: a.principal, name: a.name, approved_at: a.decided_at, expires_at: a.expires_at })),
        still_needed: still,
        rejected_by: rejection ? { principal: rejection.principal, name: rejection.name, decided_at: rejection.decided_at, comment: rejection.comment } : null,
        who_can_approve:
          policy.reviewers_needed === 0
            ? `nobody needs to: standing approval "${policy.standing_approval}" covers this plan`
            : 'a reviewer or admin in scope, other than the proposer and those who already approved',
      },
      approvals: entries.map((e) => ({ ...e })),
      state,
      proposed_by: row.proposed_by,
      created_at: row.created_at,
      expires_at: row.expires_at,
      review_url: `/review/plans/${row.id}`,
      compensates: row.compensates,
      selection: {
        count: selection.count,
        digest: selection.digest,
        complete: selection.complete,
        consistent_snapshot: selection.consistent_snapshot,
        expires_at: selection.expires_at,
        url: `/v1/selections/${selection.selection_id}`,
        exclusions: selection.exclusions.map((e) => ({ rule: e.rule, count: e.count })),
      },
    }
  }

  // ---------- decisions ----------

  async function decide(actor: Actor, planId: string, input: unknown): Promise<ApprovalResult> {
    const request = parseRequest(approvalRequestSchema, input, 'approval')
    if (actor.role !== 'reviewer' && actor.role !== 'admin')
      throw new WarrantError('forbidden', `only a reviewer or an admin can approve or reject a plan; this principal is an ${actor.role}`, { role: actor.role })
    const row = await loadRow(planId)
    scoped(actor, row.resource)
    if (actor.principal === row.proposed_by)
      throw new WarrantError('forbidden', 'the principal who proposed a plan cannot approve or reject it; another reviewer must', { plan_id: planId })
    if (row.state === 'committed' || row.state === 'rejected')
      throw new WarrantError('conflict', `plan ${planId} is already ${row.state}; it takes no more decisions`, { plan_id: planId, state: row.state })
    const selection = await selectionOf(row)
    selections.assertUsable(selection)
    if (selection.digest !== row.selection_digest)
      throw new WarrantError('digest_mismatch', `selection ${selection.selection_id} no longer has the digest this plan was made on`, { plan_id: planId })
    if (request.expected_plan_digest !== row.plan_digest)
      throw new WarrantError('digest_mismatch', `the plan digest you reviewed (${request.expected_plan_digest}) is not this plan's (${row.plan_digest}); review the plan again`, {
        expected: request.expected_plan_digest,
        actual: row.plan_digest,
      })

    const policy = JSON.parse(row.policy) as StoredPolicy
    const now = clock()
    const decidedAt = now.toISOString()
    const ttlEnd = new Date(now.getTime() + policy.ttl_minutes * 60_000).toISOString()
    const expiresAt = request.decision === 'approve' ? (ttlEnd < selection.expires_at ? ttlEnd : selection.expires_at) : null
    const approvalId = `apr_${randomBytes(12).toString('hex')}`

    const outcome = await db.transaction().execute(async (trx) => {
      let locked = trx.selectFrom('plans').select(['state']).where('id', '=', planId)
      if (store.dialect === 'postgres') locked = locked.forUpdate()
      const current = await locked.executeTakeFirstOrThrow()
      if (current.state === 'committed' || current.state === 'rejected')
        throw new WarrantError('conflict', `plan ${planId} is already ${current.state}; it takes no more decisions`, { plan_id: planId, state: current.state })
      const before = await trx
        .selectFrom('approvals')
        .select(sql<number>`count(*)`.as('n'))
        .where('plan_id', '=', planId)
        .where('principal', '=', actor.principal)
        .where('decision', '=', 'approve')
        .where('plan_digest', '=', row.plan_digest)
        .where('expires_at', '>', decidedAt)
        .executeTakeFirstOrThrow()
      await trx
        .insertInto('approvals')
        .values({ id: approvalId, plan_id: planId, plan_digest: row.plan_digest, decision: request.decision, principal: actor.principal, comment: request.comment ?? null, decided_at: decidedAt, expires_at: expiresAt })
        .execute()
      let state: PlanRow['state']
      if (request.decision === 'reject') state = 'rejected'
      else {
        const approvers = await trx
          .selectFrom('approvals')
          .innerJoin('principals', 'principals.id', 'approvals.principal')
          .select(sql<number>`count(distinct approvals.principal)`.as('n'))
          .where('approvals.plan_id', '=', planId)
          .where('approvals.decision', '=', 'approve')
          .where('approvals.plan_digest', '=', row.plan_digest)
          .where('approvals.expires_at', '>', decidedAt)
          .where('approvals.principal', '!=', row.proposed_by)
          .where('principals.role', 'in', ['reviewer', 'admin'])
          .where('principals.disabled_at', 'is', null)
          .executeTakeFirstOrThrow()
        state = Number(approvers.n) >= policy.reviewers_needed ? 'approved' : 'pending'
      }
      await trx.updateTable('plans').set({ state }).where('id', '=', planId).execute()
      return { state, counted: request.decision === 'approve' && Number(before.n) === 0 }
    })

    const after = await approvalsOf(await loadRow(planId), decidedAt)
    const still = outcome.state === 'rejected' ? 0 : Math.max(0, policy.reviewers_needed - distinctApprovers(after).length)
    const plan = toRecord(row)
    let precondition: Filter = {}
    try {
      precondition = plan.compensates ? {} : actionConfigOf(plan).precondition
    } catch {
      precondition = {}
    }
    return {
      approval_id: approvalId,
      plan_id: planId,
      plan_digest: row.plan_digest,
      selection_id: row.selection_id,
      selection_digest: row.selection_digest,
      target_count: Number(row.target_count),
      resource: row.resource,
      environment: row.environment,
      action: { type: plan.action.type, params: displayParams(plan), precondition },
      decision: request.decision,
      approved_by: request.decision === 'approve' ? actor.principal : null,
      approved_by_name: request.decision === 'approve' ? actor.name : null,
      approved_at: request.decision === 'approve' ? decidedAt : null,
      rejected_by: request.decision === 'reject' ? actor.principal : null,
      decided_at: decidedAt,
      expires_at: expiresAt,
      comment: request.comment ?? null,
      counted: outcome.counted,
      plan_state: outcome.state,
      still_needed: still,
    }
  }

  // ---------- commit checks ----------

  async function assertCommittable(
    actor: Actor,
    planId: string,
    expected?: string | { readonly plan_digest?: string; readonly selection_digest?: string },
  ): Promise<CommittablePlan> {
    const row = await loadRow(planId)
    const action = JSON.parse(row.action) as CanonicalAction
    if (row.compensates) {
      const original = String(action.params.compensates_action ?? '')
      if (!inScope(actor, row.resource, COMPENSATE) && !inScope(actor, row.resource, original)) scoped(actor, row.resource, COMPENSATE)
      else scoped(actor, row.resource)
    } else scoped(actor, row.resource, action.type)
    if (row.state === 'committed') throw new WarrantError('conflict', `plan ${planId} is already committed`, { plan_id: planId, state: row.state })
    if (row.state === 'rejected') throw new WarrantError('conflict', `plan ${planId} was rejected; propose a new plan`, { plan_id: planId, state: row.state })

    if (typeof expected === 'string') {
      if (expected !== row.plan_digest && expected !== row.selection_digest)
        throw new WarrantError('digest_mismatch', `the expected digest ${expected} is neither this plan's digest nor its selection's`, { expected, plan_digest: row.plan_digest, selection_digest: row.selection_digest })
    } else if (expected) {
      if (expected.plan_digest !== undefined && expected.plan_digest !== row.plan_digest)
        throw new WarrantError('digest_mismatch', `the expected plan digest ${expected.plan_digest} is not this plan's (${row.plan_digest})`, { expected: expected.plan_digest, actual: row.plan_digest })
      if (expected.selection_digest !== undefined && expected.selection_digest !== row.selection_digest)
        throw new WarrantError('digest_mismatch', `the expected selection digest ${expected.selection_digest} is not this plan's selection's (${row.selection_digest})`, {
          expected: expected.selection_digest,
          actual: row.selection_digest,
        })
    }

    const selection = await selectionOf(row)
    if (selection.digest !== row.selection_digest)
      throw new WarrantError('digest_mismatch', `selection ${selection.selection_id} changed since the plan was made`, { plan_id: planId })
    selections.assertUsable(selection)

    const resource = catalogue.get(row.resource)
    if (resource.environment !== row.environment)
      throw new WarrantError('conflict', `the resource's environment is now "${resource.environment}", not the "${row.environment}" this plan was approved for`, { plan_id: planId })
    const plan = toRecord(row)
    const actionConfig = actionConfigOf(plan)
    const policy = JSON.parse(row.policy) as StoredPolicy
    if (digestOf(actionConfig) !== policy.action_definition_digest)
      throw new WarrantError('conflict', `action "${action.type}" was redefined in the config since this plan was proposed; propose and review it again`, { plan_id: planId })

    const now = nowIso()
    if (policy.reviewers_needed === 0) {
      // A standing approval: re-check it against the config as it is now.
      const current = plan.compensates ? null : await standingStillApplies(resource, selection, action.type, policy.standing_approval)
      if (current) return { plan: { ...plan, state: 'approved' }, selection, actionConfig, approvals: [], standing_approval: current }
      throw new WarrantError('not_approved', `standing approval "${policy.standing_approval}" no longer covers this plan; it needs a reviewer's approval`, { plan_id: planId })
    }
    const entries = await approvalsOf(row, now)
    const approvers = distinctApprovers(entries)
    if (approvers.length >= policy.reviewers_needed)
      return {
        plan: { ...plan, state: 'approved' },
        selection,
        actionConfig,
        approvals: approvers.map((a) => ({ principal: a.principal, decided_at: a.decided_at, expires_at: a.expires_at })),
        standing_approval: null,
      }
    const lapsed = entries.filter((e) => e.decision === 'approve' && e.plan_digest === row.plan_digest && e.expires_at !== null && e.expires_at <= now)
    if (lapsed.length > 0 && new Set([...approvers.map((a) => a.principal), ...lapsed.map((e) => e.principal)]).size >= policy.reviewers_needed)
      throw new WarrantError('expired', `the approval of plan ${planId} expired (at ${lapsed.map((e) => e.expires_at).sort().at(-1)}); a reviewer must approve it again`, { plan_id: planId })
    throw new WarrantError(
      'not_approved',
      `plan ${planId} needs ${policy.reviewers_needed} distinct reviewer approval(s) of digest ${row.plan_digest}; it has ${approvers.length}`,
      { plan_id: planId, reviewers_needed: policy.reviewers_needed, approvals: approvers.length },
    )
  }

  async function standingStillApplies(resource: Resource, selection: SelectionRecord, type: string, name: string | null): Promise<string | null> {
    const candidate = standingCandidates(resource.config, selection, type).find((c) => c.name === name)
    if (!candidate || selection.count > candidate.max_count) return null
    let flagged = false
    if (candidate.flagged) {
      const flag = candidate.flagged
      await forEachMember(selection.selection_id, (m) => {
        if (matchesFilter(m.fields, flag)) flagged = true
      })
    }
    return flagged ? null : candidate.name
  }

  // ---------- compensation ----------

  async function proposeCompensation(actor: Actor, operationId: string, source: PlanRecord, targets: readonly CompensationTargetInput[]): Promise<PlanProposal> {
    const resource = catalogue.get(source.resource)
    scoped(actor, resource.name)
    const sourceConfig = actionConfigOf(source)
    if (!sourceConfig.reversible)
      throw new WarrantError('conflict', `action "${source.action.type}" is declared irreversible; there is no compensation to propose`, { action: source.action.type })
    if (targets.length === 0) throw new WarrantError('conflict', `operation ${operationId} has no succeeded target to compensate`, { operation_id: operationId })
    const denied = new Set(resource.config.denied_fields)
    const fields = Object.keys(sourceConfig.set).filter((f) => !denied.has(f) && f !== resource.config.id_field).sort()
    const restore: Record<string, Record<string, unknown>> = {}
    const expect: Record<string, Record<string, unknown>> = {}
    for (const t of targets) {
      const lost = fields.filter((f) => !Object.hasOwn(t.before, f))
      if (lost.length > 0)
        throw new WarrantError('conflict', `target "${t.id}" has no recorded before-value for ${lost.join(', ')}; it cannot be restored`, { id: t.id, fields: lost })
      restore[t.id] = Object.fromEntries(fields.map((f) => [f, t.before[f] ?? null]))
      expect[t.id] = Object.fromEntries(fields.map((f) => [f, t.after[f] ?? null]))
    }
    const writeAction = source.compensates ? String(source.action.params.write_action ?? '') : source.action.type
    const selection = await selections.createFromTargets(
      actor,
      resource.name,
      { kind: 'compensation', operation_id: operationId, plan_id: source.plan_id },
      targets.map((t) => ({ id: t.id, after: expect[t.id]!, version: t.version ?? null })),
    )
    const action: CanonicalAction = {
      type: COMPENSATE,
      params: { operation_id: operationId, compensates_plan: source.plan_id, compensates_action: source.action.type, write_action: writeAction, fields, restore, expect },
    }
    const plan: PlanRecord = { ...source, action, compensates: operationId }
    return createPlan({ actor, resource, selection, action, config: compensationConfig(resource.config, plan), compensates: operationId })
  }

  function renderCompensation(plan: PlanRecord, actionConfig: ActionConfig, target: { readonly id: string; readonly version: string | null }): RenderedWrite {
    const params = plan.action.params as { restore?: Record<string, Record<string, unknown>>; expect?: Record<string, Record<string, unknown>>; write_action?: string }
    const restore = params.restore?.[target.id]
    const wrote = params.expect?.[target.id]
    if (!restore || !wrote) throw new WarrantError('invalid_request', `"${target.id}" is not a target of compensation plan ${plan.plan_id}`, { id: target.id })
    const precondition: Record<string, Filter[string]> = {}
    for (const [field, value] of Object.entries(wrote)) {
      if (value === null) precondition[field] = { is_null: true }
      else if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') precondition[field] = value
      // a list or an object cannot be compared by a filter; the frozen version still guards the target
    }
    const resource = catalogue.get(plan.resource)
    const original = params.write_action && Object.hasOwn(resource.config.actions, params.write_action) ? resource.config.actions[params.write_action] : undefined
    // Templates written against the original action's params get the values being restored.
    const inverse: Record<string, unknown> = {}
    for (const [field, template] of Object.entries(original?.set ?? {})) {
      const m = typeof template === 'string' ? /^\{\{\s*params\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}$/.exec(template) : null
      if (m && Object.hasOwn(restore, field)) inverse[m[1]!] = restore[field]
    }
    const ctx: TemplateContext = { id: target.id, version: target.version, params: inverse, set: restore }
    const write = actionConfig.write
    return {
      set: { ...restore },
      ...(write
        ? { http: { method: write.method, path: renderPath(write.path, ctx), ...(write.body === undefined ? {} : { body: renderValue(write.body, ctx) }), ifMatch: write.if_match } }
        : {}),
      expect: { status: actionConfig.expect.status, fields: { ...restore } },
      precondition: precondition as Filter,
    }
  }

  function compensationConfig(config: ResourceConfig, plan: PlanRecord): ActionConfig {
    const params = plan.action.params as { operation_id?: string; write_action?: string; fields?: string[] }
    const original = params.write_action && Object.hasOwn(config.actions, params.write_action) ? config.actions[params.write_action] : undefined
    const fields = params.fields ?? []
    return {
      description: `restore what operation ${params.operation_id} changed (${fields.join(', ')}) to each record's before-value, only where the record still holds what the operation wrote`,
      params: {},
      set: Object.fromEntries(fields.map((f) => [f, `(per target: its before-value of ${f})`])),
      precondition: {},
      ...(original?.write ? { write: original.write } : {}),
      expect: { status: original?.expect.status ?? [200, 201, 204] },
      reversible: true,
    }
  }

  // ---------- the service ----------

  return {
    async propose(actor, selectionId, request) {
      const selection = await selections.load(actor, selectionId)
      const resource = catalogue.get(selection.resource)
      const input = (request as { action?: unknown } | null)?.action
      if (input === undefined) throw new WarrantError('invalid_request', 'the request needs an action: {type, params}', { field: 'action' })
      const { action, config } = canonicalActionOf(resource, input)
      scoped(actor, resource.name, action.type)
      selections.assertUsable(selection)
      if (resource.environment !== selection.environment)
        throw new WarrantError('conflict', `the resource's environment is now "${resource.environment}", not the "${selection.environment}" the selection was read from; create a new selection`)
      return createPlan({ actor, resource, selection, action, config, compensates: null })
    },

    async load(actor, planId) {
      const row = await loadRow(planId)
      scoped(actor, row.resource)
      const now = nowIso()
      const selection = await selectionOf(row)
      return toRecord(row, effectiveState(row, selection, JSON.parse(row.policy) as StoredPolicy, await approvalsOf(row, now), now))
    },

    assertCommittable,
    renderWrite,

    async findBySelectionAndAction(actor, selectionId, request) {
      const selection = await selections.load(actor, selectionId)
      const resource = catalogue.get(selection.resource)
      const { action } = canonicalActionOf(resource, request)
      const row = await existingPlan(selectionId, action)
      return row ? toRecord(row) : null
    },

    async markCommitted(planId) {
      const result = await db.updateTable('plans').set({ state: 'committed' }).where('id', '=', planId).where('state', 'in', ['pending', 'approved']).executeTakeFirst()
      if (Number(result.numUpdatedRows) === 1) return
      const row = await loadRow(planId)
      throw new WarrantError('conflict', `plan ${planId} is ${row.state}; it cannot be marked committed`, { plan_id: planId, state: row.state })
    },

    proposeCompensation,

    async view(actor, planId) {
      const row = await loadRow(planId)
      scoped(actor, row.resource)
      return viewOf(row)
    },

    async changes(actor, planId, query): Promise<ChangesPage> {
      const row = await loadRow(planId)
      scoped(actor, row.resource)
      const limit = query.limit ?? 100
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new WarrantError('invalid_request', 'limit must be an integer from 1 to 1000', { field: 'limit' })
      const total = Number(row.target_count)
      const list = `changes:${planId}`
      const after = cursors.decode(row.selection_id, list, query.cursor, total)
      const plan = toRecord(row)
      const config = actionConfigOf(plan)
      const page = await selections.members(row.selection_id, after, limit)
      const last = page[page.length - 1]
      return {
        plan_id: planId,
        plan_digest: row.plan_digest,
        target_count: total,
        changes: page.map((m) => {
          const rendered = renderWrite(plan, config, { id: m.id, version: m.version })
          return { ord: m.ord, id: m.id, version: m.version, changes: Object.entries(rendered.set).map(([field, after]) => ({ field, before: m.fields[field] ?? null, after })) }
        }),
        next_cursor: last && page.length === limit && last.ord < total ? cursors.encode(row.selection_id, list, last.ord) : null,
      }
    },

    decide,
    actionConfigOf,
  }
}

/** Compensation plans show how many targets they restore, not every target's values. */
function displayParams(plan: PlanRecord): Record<string, unknown> {
  if (!plan.compensates) return { ...plan.action.params }
  const { restore, expect: _expect, ...rest } = plan.action.params as { restore?: Record<string, unknown>; expect?: unknown } & Record<string, unknown>
  return { ...rest, targets: Object.keys(restore ?? {}).length, targets_digest: digestOf({ restore, expect: _expect }) }
}

interface StandingCandidate {
  readonly name: string
  readonly max_count: number
  readonly flagged: Filter | undefined
}

/** Standing approvals whose selector (filter and exclusion rules, compared canonically) and action match. */
function standingCandidates(config: ResourceConfig, selection: SelectionRecord, type: string): StandingCandidate[] {
  const same = (a: Filter, b: Filter) => canonicalJson(clausesOf(a)) === canonicalJson(clausesOf(b))
  const sameRules = (a: readonly { rule: string; filter: Filter }[], b: readonly { rule: string; filter: Filter }[]) =>
    a.length === b.length && a.every((r, i) => r.rule === b[i]!.rule && same(r.filter, b[i]!.filter))
  return config.standing_approvals
    .filter((s) => s.action === type && same(s.selector, selection.selector.filter) && sameRules(s.exclude, selection.selector.exclude))
    .map((s) => ({ name: s.name, max_count: s.max_count, flagged: s.flagged }))
}

/** Before and after values of one field over every target. */
class FieldTally {
  readonly #after = new Map<string, { value: unknown; count: number }>()
  readonly #before = new Map<string, { value: unknown; count: number }>()
  #afterOverflow = 0
  #beforeOverflow = 0
  #unchanged = 0

  add(before: unknown, after: unknown): void {
    const b = canonicalJson(before ?? null)
    const a = canonicalJson(after ?? null)
    if (a === b) this.#unchanged += 1
    if (!bump(this.#after, a, after ?? null)) this.#afterOverflow += 1
    if (!bump(this.#before, b, before ?? null)) this.#beforeOverflow += 1
  }

  summary(field: string): PlanView['changes']['summary'][number] {
    const sort = (m: Map<string, { value: unknown; count: number }>) => [...m.values()].sort((x, y) => y.count - x.count)
    const afters = sort(this.#after)
    const uniform = afters.length <= 1 && this.#afterOverflow === 0
    return {
      field,
      after: uniform ? (afters[0]?.value ?? null) : null,
      ...(uniform ? {} : { after_values: afters }),
      before: sort(this.#before),
      before_complete: this.#beforeOverflow === 0,
      unchanged: this.#unchanged,
    }
  }
}

function bump(map: Map<string, { value: unknown; count: number }>, key: string, value: unknown): boolean {
  const entry = map.get(key)
  if (entry) entry.count += 1
  else if (map.size < SUMMARY_VALUES_MAX) map.set(key, { value, count: 1 })
  else return false
  return true
}

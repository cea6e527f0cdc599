import { randomBytes } from 'node:crypto'
import { type Actor, WarrantError, canonicalJson, digestOf, matchesFilter } from '../contract/index.js'
import type { ActionConfig } from '../config/index.js'
import { type Resource, UPSTREAM_PARTS, sameUpstream, upstreamDigestOf } from '../resources/index.js'
import type { SelectionRecord } from '../selections/selection-service.js'
import { withKeyedLock, type Database, type PlanRow } from '../store/index.js'
import type { Kysely } from 'kysely'
import { actionConfigOf, canonicalActionOf, renderWrite } from './actions.js'
import { type StoredPolicy, decidePolicy, standingCandidates, unfrozenFields } from './approval-policy.js'
import { FieldTally, MOVED_IDS_MAX, preconditionVerdict, type StoredChanges } from './change-summary.js'
import { COMPENSATE, assertRestorable, compensationConfig, writtenSetDigestOf } from './compensation.js'
import { type CanonicalAction, type PlanContext, forEachMember, loadRow, scoped } from './plan-context.js'
import type { CompensationTargetInput, PlanRecord } from './plan-service.js'
import { viewOf } from './plan-view.js'
import { followingPlans } from './follow-ups.js'
import { type RunLimits, runLimitsOf, sameRunLimits } from './run-limits.js'
import { assertColumnsFit, assertSettable } from './set-types.js'
import { assertVersionsPerWrite } from './version-repeats.js'
import type { ApprovalPolicy, PlanProposal } from './schemas.js'

/** What either way of proposing (on a selection, or compensating an operation) hands to `createPlan`. */
interface Proposal {
  readonly actor: Actor
  readonly resource: Resource
  readonly selection: SelectionRecord
  readonly action: CanonicalAction
  readonly config: ActionConfig
  readonly compensates: string | null
  /** A compensation's targets as read when it is proposed (see `CompensationTargetInput.current`). */
  readonly current?: ReadonlyMap<string, Readonly<Record<string, unknown>> | null>
  /**
   * A proposal made from an operation on a selection frozen for this request alone (a remainder's): the plan that
   * already answers it (`open`), looked up again under the lock of `key`; the selection of a request that lost goes.
   */
  readonly follows?: { readonly key: string; open(db: Kysely<Database>): Promise<PlanRow | undefined> }
}

/** The advisory-lock space proposals lock in (PostgreSQL), apart from the audit chain's lock. */
const PROPOSAL_LOCK_SPACE = 7_310_551

/**
 * Proposing is idempotent: the same action, as defined now (`definition`: `digestOf` its config), on the same selection
 * is the same plan. A plan of the action as defined before is another proposal: it is refused at approval and commit
 * (`action_redefined`), and answering it again left an agent that proposed again, as its view advises, looping on it.
 * So is one bound to other stop rules and pacing than `limits` (the config's now, `runLimitsOf`; null: any), for the same reason
 * (`run_limits_changed`); a plan proposed before plans bound them is of any.
 */
export async function existingPlan(
  ctx: Pick<PlanContext, 'db'>,
  selectionId: string,
  action: CanonicalAction,
  definition: string,
  limits: RunLimits | null,
): Promise<PlanRow | undefined> {
  const rows = await ctx.db
    .selectFrom('plans')
    .selectAll()
    .where('selection_id', '=', selectionId)
    .where('action_type', '=', action.type)
    .where('action', '=', canonicalJson(action))
    .orderBy('created_at')
    .orderBy('id')
    .execute()
  return rows.find((r) => {
    const policy = JSON.parse(r.policy) as StoredPolicy
    return policy.action_definition_digest === definition && (limits === null || sameRunLimits(policy.run_limits, limits))
  })
}

export async function proposeOnSelection(ctx: PlanContext, actor: Actor, selectionId: string, request: unknown): Promise<PlanProposal> {
  const selection = await ctx.selections.load(actor, selectionId)
  const resource = ctx.catalogue.get(selection.resource)
  const input = (request as { action?: unknown } | null)?.action
  if (input === undefined) throw new WarrantError('invalid_request', 'the request needs an action: {type, params}', { field: 'action' })
  const { action, config } = canonicalActionOf(resource, input)
  scoped(actor, resource.name, action.type)
  // An incomplete selection may still be proposed on: the reviewer then sees the action beside the missing
  // evidence and chooses a recovery (the truncation article's approval). Approval and commit refuse it.
  if (ctx.selections.isExpired(selection)) ctx.selections.assertUsable(selection)
  if (resource.environment !== selection.environment)
    throw new WarrantError('conflict', `the resource's environment is now "${resource.environment}", not the "${selection.environment}" the selection was read from; create a new selection`)
  // the label can read the same while the connector points elsewhere: the plan's upstream digest is taken below
  ctx.selections.assertSameUpstream(selection)
  return createPlan(ctx, { actor, resource, selection, action, config, compensates: null })
}

export async function createPlan(ctx: PlanContext, p: Proposal): Promise<PlanProposal> {
  const definition = digestOf(p.config)
  const limits = runLimitsOf(ctx.execution, p.resource.config.connector)
  const existing = await existingPlan(ctx, p.selection.selection_id, p.action, definition, limits)
  if (existing) return { ...(await viewOf(ctx, existing)), created: false }
  // a version that is a business value is refused before any member is read; a compensation restores what an operation
  // wrote, and refusing the undo would leave its records as the operation left them
  if (p.compensates === null) await assertVersionsPerWrite(ctx, p.resource, p.selection.selection_id)

  const plan: PlanRecord = {
    plan_id: `plan_${randomBytes(12).toString('hex')}`,
    selection_id: p.selection.selection_id,
    resource: p.resource.name,
    environment: p.selection.environment,
    action: p.action,
    // the definition too: the same name and params defined otherwise write otherwise, and are another plan to review;
    // and the stop rules and pacing its run is held to, which an approval of this digest covers
    plan_digest: digestOf({
      selection_digest: p.selection.digest,
      action: p.action,
      action_definition: definition,
      resource: p.resource.name,
      environment: p.selection.environment,
      run_limits: limits,
    }),
    selection_digest: p.selection.digest,
    target_count: p.selection.count,
    state: 'pending',
    proposed_by: p.actor.principal,
    created_at: ctx.nowIso(),
    compensates: p.compensates,
  }
  const analysis = await analyse(ctx, p, plan)
  const policy: StoredPolicy = {
    ...analysis.policy,
    action_definition_digest: definition,
    upstream_digest: upstreamDigestOf(p.resource.config),
    run_limits: limits,
    ...(p.compensates === null ? {} : { written_set_digest: writtenSetDigestOf(p.resource.config, p) }),
  }
  // The same proposal names the same plan, also when two arrive at once (on one instance or several sharing
  // the store): the check for an existing plan and the insert run under one lock, per selection; per
  // operation for a compensation, whose every request freezes a selection of its own.
  const lockKey = p.follows ? p.follows.key : p.compensates === null ? `selection:${plan.selection_id}` : `compensation:${p.compensates}`
  const winner = await withKeyedLock({ dialect: ctx.store.dialect, db: ctx.db }, PROPOSAL_LOCK_SPACE, lockKey, async (trx) => {
    const raced = p.follows
      ? await p.follows.open(trx)
      : p.compensates === null
        ? await existingPlan({ db: trx }, p.selection.selection_id, p.action, definition, limits)
        : await openCompensation(trx, p.compensates, p.action, limits)
    if (raced) return raced
    await trx
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
    return null
  })
  if (winner) {
    // A compensation that lost the race froze a selection nobody will use: it goes, so one request is one object.
    if ((p.compensates !== null || p.follows) && winner.selection_id !== p.selection.selection_id) await ctx.selections.discardUnused(p.selection.selection_id)
    return { ...(await viewOf(ctx, winner)), created: false }
  }
  return { ...(await viewOf(ctx, await loadRow(ctx, plan.plan_id))), created: true }
}

/**
 * A set field's before-values are the members' as frozen; a member keeps only the fields the config of its freeze asked
 * for, so an action added since (or another instance's) may set one it lacks: previewed, every member read "before:
 * null", a value nobody read. 409, nothing proposed.
 */
function assertFrozenWith(p: Proposal, fields: Readonly<Record<string, unknown>>, set: readonly string[]): void {
  const unfrozen = set.filter((f) => !Object.hasOwn(fields, f))
  if (unfrozen.length === 0) return
  throw new WarrantError(
    'conflict',
    `action "${p.action.type}" sets ${unfrozen.map((f) => `"${f}"`).join(', ')}, which the members of selection ${p.selection.selection_id} were not frozen with (the config changed since it was frozen, or another instance froze it): their values before the change were never read, so no preview can show them; make a new selection and propose on it`,
    { selection_id: p.selection.selection_id, action: p.action.type, fields: unfrozen },
  )
}

/**
 * One pass over the frozen members: before → after per field, how many already fail the precondition,
 * and whether a standing approval covers the plan (no flagged member).
 */
async function analyse(ctx: PlanContext, p: Proposal, plan: PlanRecord): Promise<{ changes: StoredChanges; policy: ApprovalPolicy }> {
  const tallies = new Map<string, FieldTally>()
  const precondition = p.compensates ? null : p.config.precondition
  let failing: number | null = precondition === null ? null : 0
  const candidates = p.compensates ? [] : standingCandidates(p.resource.config, p.selection, p.action.type)
  const flagged = new Map<string, { count: number; sample: string[]; unfrozen: Set<string> }>()
  for (const c of candidates) flagged.set(c.name, { count: 0, sample: [], unfrozen: new Set() })

  // A compensation's members hold what the operation wrote; the preview shows the data as read at proposal
  // and counts the targets that no longer hold it (skipped at write time), or says it does not know.
  const current = p.compensates ? p.current : undefined
  let moved: number | null = p.compensates ? (current ? 0 : null) : null
  const movedIds: string[] = []
  let movedListed = true
  // Targets whose write changes something: a record already holding every value set is written for nothing,
  // and a reviewer must not read a change there. An absent field is not "already" the value (nobody said so).
  let changing: number | null = 0
  // the upstream's column types, read once per proposal: asked at once, so they share one catalogue read
  const connector = p.resource.connector
  const [misfits, strings, numbers] = await Promise.all([connector.fieldTypeMisfits?.() ?? null, connector.stringColumns?.() ?? null, connector.numberColumns?.() ?? null])
  await forEachMember(ctx, p.selection.selection_id, (member) => {
    const rendered = renderWrite(ctx, plan, p.config, { id: member.id, version: member.version })
    // A compensation restores the before-values the ledger recorded: what the records held, whatever its type (an
    // upstream may hold a value of another type than declared), so they are not judged against the declared types
    // or the column types; refusing them would leave the undo impossible. Its columns are judged as its write will
    // judge them (`WriteRequest.restores`, the same functions): only a value no write can put back (a strict column
    // retyped since) is refused, 409 naming it.
    const restoring = rendered.restores ? { id: member.id, values: rendered.restores } : undefined
    if (!p.compensates) assertSettable(p.action.type, p.resource.config.fields, rendered.set)
    assertColumnsFit(p.action.type, misfits, rendered.set, strings, numbers, restoring)
    if (!p.compensates) assertFrozenWith(p, member.fields, Object.keys(rendered.set))
    const now = current?.get(member.id)
    if (current && (now === undefined || now === null)) moved = null
    // skipped at write time as things stand: a compensation's target no longer holding what the operation wrote, a
    // member failing the precondition as frozen
    let skipped = false
    if (now && Object.entries(rendered.holds ?? {}).some(([f, wrote]) => canonicalJson(now[f] ?? null) !== canonicalJson(wrote ?? null))) {
      skipped = true
      if (moved !== null) moved += 1
      // kept by id, so the per-record list can say which target would be skipped (bounded: beyond it, "unknown")
      if (movedIds.length < MOVED_IDS_MAX) movedIds.push(member.id)
      else movedListed = false
    }
    if (precondition !== null) {
      // A member lacking a precondition field cannot be judged, so the count would mislead: report it unknown.
      const verdict = preconditionVerdict(member.fields, precondition, p.resource.config.fields)
      if (verdict === 'unknown') failing = null
      else if (verdict === 'fails') {
        skipped = true
        if (failing !== null) failing += 1
      }
    }
    // a skipped target's value is tallied apart: among the written ones, "paid" (17) → "overdue" read as paid invoices
    // becoming overdue where each fails the precondition and would be skipped
    for (const [field, after] of Object.entries(rendered.set)) {
      let tally = tallies.get(field)
      if (!tally) tallies.set(field, (tally = new FieldTally()))
      tally.add(now ? now[field] : member.fields[field], after, skipped)
    }
    // a skipped target is not written, so it changes nothing: counted, "1,830 of 1,830 records change" read as
    // every record changed where 129 failed the precondition and would be skipped
    const held = p.compensates ? now : member.fields
    if (!held) changing = null
    else if (changing !== null && !skipped && Object.entries(rendered.set).some(([f, after]) => !(f in held) || canonicalJson(held[f] ?? null) !== canonicalJson(after ?? null))) changing += 1
    for (const c of candidates) {
      if (!c.flagged) continue
      const f = flagged.get(c.name)!
      // a member frozen without a field the filter tests cannot be judged by it (see unfrozenFields)
      const unfrozen = unfrozenFields(c.flagged, member.fields)
      for (const field of unfrozen) f.unfrozen.add(field)
      if (unfrozen.length === 0 && matchesFilter(member.fields, c.flagged, p.resource.config.fields)) {
        f.count += 1
        if (f.sample.length < 10) f.sample.push(member.id)
      }
    }
  })

  const summary = [...tallies.entries()].map(([field, t]) => t.summary(field))
  const uniform = summary.every((s) => s.after_values === undefined)
  const movedKept = p.compensates ? { moved: { ids: movedIds, complete: moved !== null && movedListed } } : {}
  return { changes: { summary, uniform, failing_now: p.compensates ? moved : failing, changing, ...movedKept }, policy: decidePolicy(p, candidates, flagged) }
}

/**
 * What refuses a compensation before anything is read: the operation's environment and upstream (the before-values
 * belong where it wrote), the token's scope on the action written through, and the action's reversibility. Its
 * caller runs it before reading the targets' current values, so a moved connector is never read for a preview of an
 * undo that cannot be proposed (it read every target from the upstream pointed at since, then refused).
 */
export async function assertCompensable(
  ctx: PlanContext,
  actor: Actor,
  operationId: string,
  source: PlanRecord,
): Promise<{ resource: Resource; writeAction: string; sourceConfig: ActionConfig }> {
  const resource = ctx.catalogue.get(source.resource)
  // The before-values were read where the operation wrote; the new selection and plan would take the resource's
  // current environment, so the commit's environment check could not catch a resource pointed elsewhere since.
  if (resource.environment !== source.environment)
    throw new WarrantError('conflict', `the resource's environment is now "${resource.environment}", not the "${source.environment}" operation ${operationId} wrote to; its before-values belong there, so no compensation is proposed here`, { operation_id: operationId })
  // The label is what the config declares; where the connector reads and writes is the digest the original plan
  // kept. Pointed elsewhere since (staging's base_url set to production's), the new selection, plan and every later
  // check would be production's own, and the "undo" would write staging's before-values there.
  const wrote = (JSON.parse((await loadRow(ctx, source.plan_id)).policy) as StoredPolicy).upstream_digest
  if (wrote !== undefined && !sameUpstream(resource.config, wrote))
    throw new WarrantError(
      'conflict',
      `the connector of resource "${resource.name}" points elsewhere than where operation ${operationId} wrote (${UPSTREAM_PARTS}, since plan ${source.plan_id} was proposed), though its environment still reads "${resource.environment}"; its before-values belong there, so no compensation is proposed here`,
      { reason: 'upstream_moved', resource: resource.name, operation_id: operationId, plan_id: source.plan_id, config_drift: ['upstream_moved'] },
    )
  // Compensating writes through the action the operation wrote through: the token must be allowed that action.
  const writeAction = source.compensates ? String(source.action.params.write_action ?? '') : source.action.type
  scoped(actor, resource.name, writeAction)
  const sourceConfig = actionConfigOf(ctx, source)
  assertRestorable(source.action.type, sourceConfig)
  return { resource, writeAction, sourceConfig }
}

/**
 * A compensation plan restores each succeeded target's before-value. It is frozen as its own selection and goes
 * through the same review as any plan, since undoing a bulk change is itself a bulk change.
 */
export async function proposeCompensation(
  ctx: PlanContext,
  actor: Actor,
  operationId: string,
  source: PlanRecord,
  targets: readonly CompensationTargetInput[],
  unknownTargets = 0,
): Promise<PlanProposal> {
  const { resource, writeAction, sourceConfig } = await assertCompensable(ctx, actor, operationId, source)
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
  const action: CanonicalAction = {
    type: COMPENSATE,
    params: {
      operation_id: operationId,
      compensates_plan: source.plan_id,
      compensates_action: source.action.type,
      write_action: writeAction,
      fields,
      restore,
      expect,
      // targets whose write may have landed, left as they are: the plan says so (a reviewer reads "restore what the
      // operation changed"); reconciling them first brings those that landed in
      ...(unknownTargets > 0 ? { unknown_not_restored: unknownTargets } : {}),
    },
  }
  // The same request is the same object: an open compensation plan of this operation restoring exactly these
  // values is returned, not doubled with a new selection and a new plan.
  // (A fast path: two requests at once are decided in createPlan, under the operation's lock.)
  const open = await openCompensation(ctx.db, operationId, action, runLimitsOf(ctx.execution, resource.config.connector))
  if (open) return { ...(await viewOf(ctx, open)), created: false }
  // Compensating a compensation writes through the action the first one wrote through (writeAction, above).
  const selection = await ctx.selections.createFromTargets(
    actor,
    resource.name,
    { kind: 'compensation', operation_id: operationId, plan_id: source.plan_id },
    targets.map((t) => ({ id: t.id, after: expect[t.id]!, version: t.version ?? null, source: t.source ?? null })),
  )
  const plan: PlanRecord = { ...source, action, compensates: operationId }
  const current = targets.some((t) => t.current !== undefined) ? new Map(targets.map((t) => [t.id, t.current ?? null])) : undefined
  return createPlan(ctx, { actor, resource, selection, action, config: compensationConfig(resource.config, plan), compensates: operationId, ...(current ? { current } : {}) })
}

/**
 * An open (or committed) compensation plan of this operation restoring exactly these values. One bound to other stop
 * rules and pacing than `limits` (the config's now) is not open: no approval or commit of it is taken, and answering it
 * left an agent proposing again, as its view advises, looping on it. A committed one is always the answer: an
 * operation is undone once.
 */
async function openCompensation(db: Kysely<Database>, operationId: string, action: CanonicalAction, limits: RunLimits): Promise<PlanRow | undefined> {
  const rows = await followingPlans(db, { kind: 'compensation', operation_id: operationId }).where('plans.action', '=', canonicalJson(action)).execute()
  return rows.find((r) => r.state === 'committed' || sameRunLimits((JSON.parse(r.policy) as StoredPolicy).run_limits, limits))
}

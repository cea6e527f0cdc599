import { randomBytes } from 'node:crypto'
import { WarrantError, digestOf } from '../contract/index.js'
import { createCursorCodec, type CursorCodec } from '../inventory/index.js'
import type { Catalogue } from '../resources/index.js'
import { createPageCursors } from '../selections/page-cursor.js'
import type { SelectionService } from '../selections/selection-service.js'
import type { Store } from '../store/index.js'
import { actionConfigOf, canonicalActionOf, renderWrite } from './actions.js'
import { approvalsOf, decide, effectiveState } from './approval-decisions.js'
import { policyNow } from './approval-policy.js'
import { changesPage } from './change-summary.js'
import { assertCommittable } from './committability.js'
import { type PlanContext, loadRow, loadRowAt, scoped, selectionOf, toRecord } from './plan-context.js'
import type { PlanService } from './plan-service.js'
import type { ReviewPages } from './review-link.js'
import { type ExecutionConfig, runLimitsOf } from './run-limits.js'
import { viewOf } from './plan-view.js'
import { recordOpenPlansMoves } from './config-moves.js'
import { proposeRemainder } from './remainder.js'
import { assertCompensable, existingPlan, proposeCompensation, proposeOnSelection } from './proposals.js'

// Re-exported so the package's public face (index.ts) keeps importing it from here.
export { COMPENSATE } from './compensation.js'

export interface PlanServiceOptions {
  readonly store: Store
  readonly catalogue: Catalogue
  readonly selections: SelectionService
  /** `config.execution`: each plan binds its stop rules and pacing at proposal (see run-limits.ts). */
  readonly execution: ExecutionConfig
  /** Signs the cursors of `/changes` pages; default: a key of this process (cursors then die with it). */
  readonly cursorCodec?: CursorCodec
  /** Default: the store's clock. */
  readonly clock?: () => Date
  /**
   * Where a person opens the review pages, read at each plan view: the gateway passes `server.public_url`, else the
   * address it listens on (never a request's Host header, which a client chooses); where it serves none (`warrant mcp`
   * over stdio, the CLI), the address `warrant serve` on its config would listen on, not served: review_url is then
   * null and review_hint says where the plan is reviewed (see review-link.ts). Without it, review_url is a path.
   */
  readonly reviewPages?: () => ReviewPages
}

/**
 * Plans and approvals: the action catalogue, before → after for every target, the plan digest, the approval
 * policy (one or two distinct reviewers, standing approvals), and the rules a commit must pass.
 *
 * @example
 * const plans = createPlanService({ store, catalogue, selections, execution: config.execution })
 * const plan = await plans.propose(agent, selectionId, { action: { type: 'pause_collection', params: { reason: 'credit hold' } } })
 * await plans.decide(reviewer, plan.plan_id, { decision: 'approve', expected_plan_digest: plan.plan_digest })
 */
export function createPlanService(options: PlanServiceOptions): PlanService {
  const { store, catalogue, selections } = options
  const clock = options.clock ?? (() => new Date(store.now()))
  const ctx: PlanContext = {
    store,
    db: store.db,
    catalogue,
    selections,
    execution: options.execution,
    clock,
    nowIso: () => clock().toISOString(),
    reviewPages: options.reviewPages,
    cursors: createPageCursors(options.cursorCodec ?? createCursorCodec({ key: randomBytes(32) })),
  }

  return {
    propose: (actor, selectionId, request) => proposeOnSelection(ctx, actor, selectionId, request),

    async load(actor, planId) {
      const { row, now } = await loadRowAt(ctx, planId)
      scoped(actor, row.resource)
      const selection = await selectionOf(ctx, row)
      const policy = policyNow(ctx.catalogue, row, selection.count)
      return toRecord(row, effectiveState(row, selection, policy, await approvalsOf(ctx, row, now, policy.ttl_minutes), now))
    },

    assertCommittable: (actor, planId, expected) => assertCommittable(ctx, actor, planId, expected),
    renderWrite: (plan, actionConfig, target) => renderWrite(ctx, plan, actionConfig, target),

    async findBySelectionAndAction(actor, selectionId, request) {
      const selection = await selections.load(actor, selectionId)
      const resource = catalogue.get(selection.resource)
      const { action, config } = canonicalActionOf(resource, request)
      // one bound to other limits than configured now is still this selection's and action's plan: its commit is then
      // refused naming the drift (run_limits_changed), not answered as if none had been proposed
      const limits = runLimitsOf(ctx.execution, resource.config.connector)
      const row = (await existingPlan(ctx, selectionId, action, digestOf(config), limits)) ?? (await existingPlan(ctx, selectionId, action, digestOf(config), null))
      return row ? toRecord(row) : null
    },

    async markCommitted(planId) {
      // Conditional update, so two committers racing cannot both mark it.
      const result = await ctx.db.updateTable('plans').set({ state: 'committed' }).where('id', '=', planId).where('state', 'in', ['pending', 'approved']).executeTakeFirst()
      if (Number(result.numUpdatedRows) === 1) return
      const row = await loadRow(ctx, planId)
      throw new WarrantError('conflict', `plan ${planId} is ${row.state}; it cannot be marked committed`, { plan_id: planId, state: row.state })
    },

    proposeCompensation: (actor, operationId, source, targets, unknownTargets) => proposeCompensation(ctx, actor, operationId, source, targets, unknownTargets),
    proposeRemainder: (actor, operationId, source, targets, readCurrent) => proposeRemainder(ctx, actor, operationId, source, targets, readCurrent),
    assertCompensable: async (actor, operationId, source) => void (await assertCompensable(ctx, actor, operationId, source)),

    async view(actor, planId) {
      const { row, now } = await loadRowAt(ctx, planId)
      scoped(actor, row.resource)
      return viewOf(ctx, row, now)
    },

    recordOpenPlansMoves: () => recordOpenPlansMoves(ctx),
    changes: (actor, planId, query) => changesPage(ctx, actor, planId, query),
    decide: (actor, planId, request) => decide(ctx, actor, planId, request),
    actionConfigOf: (plan) => actionConfigOf(ctx, plan),
  }
}

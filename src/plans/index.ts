export { createPlanService, COMPENSATE, type PlanServiceOptions } from './create-plan-service.js'
export {
  actionRequestSchema,
  proposePlanRequestSchema,
  approvalRequestSchema,
  approvalPolicySchema,
  approvalEntrySchema,
  approvalResultSchema,
  changeSummarySchema,
  planViewSchema,
  planProposalSchema,
  recordChangeSchema,
  changesQuerySchema,
  changesPageSchema,
  type ActionRequestInput,
  type ApprovalRequestInput,
  type ApprovalPolicy,
  type ApprovalResult,
  type PlanView,
  type PlanProposal,
  type ChangesPage,
} from './schemas.js'
export type { PlanService, PlanRecord, RenderedWrite, CommittablePlan, ActionRequest, CompensationTargetInput } from './plan-service.js'
export { renderValue, renderPath, type TemplateContext } from './render.js'
export { assertRestorable, planInActionScope } from './compensation.js'
export { actionConfigOf } from './actions.js'
export { placeDriftOf } from './config-drift.js'
export { assertAuthorityHolds, rejectedPlan } from './approval-holds.js'
export { isApproverReason, notCountedWords, withdrawnApprovalSentences, type NotCounted } from './approval-not-counted.js'
export { runLimitsOf, type RunLimits } from './run-limits.js'
export { reviewLink, type ReviewLink, type ReviewPages } from './review-link.js'
export { unchangedTargets, unchangedWords } from './unchanged-targets.js'
export { followUpsOf, followUpsSchema, NO_FOLLOW_UPS, type FollowUp, type FollowUps } from './follow-ups.js'

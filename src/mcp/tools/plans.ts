import { z } from 'zod'
import { cursorArgument, revealed } from '../../contract/index.js'
import { type ChangesPage, changesPageSchema, type PlanProposal, planProposalSchema, type PlanView, planViewSchema, proposePlanRequestSchema, unchangedWords, withdrawnApprovalSentences } from '../../plans/index.js'
import { completenessLabel, lookalikeClause, named, plural, quoted } from '../summaries.js'
import { defineTool, READ_ONLY, readOnlyBy, RULES_BRIEF } from '../tool.js'
import { selectionIdSchema } from './selections.js'

export const planIdSchema = z.string().min(1).max(200).describe('from propose_change')

const NO_APPROVING = 'No tool approves: a person approves or rejects on the review page.'

/**
 * A plan's summary: the evidence's completeness first, then what the plan does, where, and what approval
 * it needs or has.
 */
export function planSummary(plan: PlanView | PlanProposal): string {
  const s = plan.selection
  const evidence = s.complete
    ? `COMPLETE selection (${plural(s.count, 'record')}, digest ${s.digest})`
    : `INCOMPLETE selection (${plural(s.count, 'record')}): it can be reviewed, never committed; show its incomplete_reasons (read_selection) to the person`
  // the parameters are the agent's words, labelled so: a reason must not read as this summary's own sentence
  const params = Object.keys(plan.action.params).length ? ` with the agent's words ${revealed(JSON.stringify(plan.action.params))}` : ''
  const what = `plan ${plan.plan_id} (${plan.state}${'created' in plan && !plan.created ? ', already proposed: the existing plan' : ''}) applies ${plan.action.type}${params} to ${plural(plan.target_count, 'target')} of ${plan.resource} in ${plan.environment}; plan_digest ${plan.plan_digest}.`
  const a = plan.approval_state
  // a link only where review pages are served; else where they would be (warrant mcp over stdio serves none)
  const review = plan.review_url !== null ? `Give the person the review page ${plan.review_url}` : `There is no review link to give: ${plan.review_hint}. Tell the person so`
  let approval: string
  if (plan.state === 'committed') approval = 'It has been committed: read the operation with get_operation.'
  else if (plan.state === 'rejected') approval = `It was rejected${a.rejected_by ? ` by ${named(a.rejected_by.name ?? a.rejected_by.principal)}${a.rejected_by.comment ? ` (comment ${quoted(a.rejected_by.comment)})` : ''}` : ''}: do not commit; propose something else or ask the person.`
  else if (plan.state === 'expired') approval = 'It has expired with its selection: create a new selection and propose again.'
  else if (plan.config_drift.length > 0)
    approval = `CANNOT RUN: ${plan.config_drift.map((d) => revealed(d.message)).join('; ')}. No approval or commit of it is taken while the config differs, and an approval given before does not count again if the config is put back; tell the person, and propose again on a new selection.`
  else if (a.expired)
    approval = `APPROVAL EXPIRED at ${a.expired_at}: a commit is refused (expired) until a reviewer approves again; ${a.still_needed} needed. ${review} and wait; check with get_plan. ${NO_APPROVING}`
  else if (a.approved)
    approval = `Approved by ${a.approved_by.map((p) => named(p.name ?? p.principal)).join(', ')}${a.approved_by[0]?.expires_at ? ` until ${a.approved_by[0].expires_at}` : ''}: commit with commit_change (plan_id, expected_digest = plan_digest, a new idempotency_key).`
  else
    approval = `Needs approval: ${plan.approval.required.replace(/_/g, ' ')} (${revealed(plan.approval.reason)}); ${a.still_needed} still needed; ${a.who_can_approve}. ${review} and wait; check with get_plan. ${NO_APPROVING}`
  const changing = plan.changes.changing
  // a change every target already holds, or that each would skip, is no change: say so, so the agent does not report one
  const unchanged = unchangedWords(plan)
  const held =
    changing === null
      ? plan.precondition.failing_now
        ? ` ${plural(plan.precondition.failing_now, 'member')} already fail the precondition and would be skipped.`
        : ''
      : unchanged === ''
        ? ''
        : changing === 0
          ? ` NO TARGET CHANGES: ${unchanged}.`
          : ` ${changing} of ${plan.target_count} targets change; ${unchanged}.`
  // an approval withdrawn (a token revoked, a principal disabled) is named with why, so the agent does not ask the same reviewer to click again
  const withdrawn = plan.state === 'pending' ? withdrawnApprovalSentences(plan.approvals).map((w) => ` No longer counts: ${revealed(w)}.`).join('') : ''
  return `${evidence}: ${what}${lookalikeClause(plan.lookalike_ids)} ${approval}${withdrawn}${held}`
}

export const proposeChange = defineTool({
  name: 'propose_change',
  title: 'Propose a change on a selection',
  // Same answer as POST /v1/selections/{id}/plans.
  description: [
    'Propose an action on a frozen selection: before → after, plan_digest, the approval needed, review_url for a person (null where no review pages are served: review_hint says where). Writes nothing; proposing again returns the same plan.',
    NO_APPROVING,
    RULES_BRIEF,
  ].join('\n'),
  input: z.strictObject({ selection_id: selectionIdSchema, ...proposePlanRequestSchema.shape }),
  output: planProposalSchema,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run({ selection_id, action }, { gateway, actor }): Promise<PlanProposal> {
    return gateway.plans.propose(actor, selection_id, { action })
  },
  summarize: (plan) => planSummary(plan),
})

const getPlanInput = z.strictObject({
  plan_id: planIdSchema,
  part: z.enum(['overview', 'changes']).default('overview').describe("overview; changes: a page of before → after"),
  cursor: cursorArgument(4096).optional().describe('next_cursor of the previous page; leave it out for the first (null and "" are refused)'),
  limit: z.number().int().min(1).max(1000).optional().describe('records per page, default 100'),
}).superRefine(readOnlyBy({ cursor: ['changes'], limit: ['changes'] }))

export const getPlan = defineTool({
  name: 'get_plan',
  title: 'Read a plan and its approval state',
  // Same answers as GET /v1/plans/{id} and GET /v1/plans/{id}/changes.
  description: ['Read a plan: state, approval state (who approved, until when, expired, still needed), review_url; or a page of per-record changes.', NO_APPROVING, RULES_BRIEF].join('\n'),
  input: getPlanInput,
  output: z.union([planViewSchema, changesPageSchema]),
  annotations: { ...READ_ONLY },
  async run(args, { gateway, actor }): Promise<PlanView | ChangesPage> {
    if (args.part === 'changes') return gateway.plans.changes(actor, args.plan_id, { ...(args.cursor === undefined ? {} : { cursor: args.cursor }), limit: args.limit ?? 100 })
    return gateway.plans.view(actor, args.plan_id)
  },
  summarize(answer, args) {
    if (args.part === 'overview') return planSummary(answer as PlanView)
    const page = answer as ChangesPage
    const partial = page.complete ? '' : " The plan's selection is incomplete: these are only the records its walk returned, not every record the filter matches, and the plan can never be approved or committed; show incomplete_reasons to the person."
    return `${completenessLabel(page)} selection: ${page.next_cursor ? 'MORE PAGES' : 'LAST PAGE'}: per-record changes of ${plural(page.changes.length, 'record')} of the ${page.target_count} targets of plan ${page.plan_id} (plan_digest ${page.plan_digest}); ${page.next_cursor ? 'call again with cursor = next_cursor, unchanged, for the rest' : 'nothing follows'}.${partial}`
  },
})

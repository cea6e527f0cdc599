import { z } from 'zod'
import { type ChangesPage, changesPageSchema, type PlanProposal, planProposalSchema, type PlanView, planViewSchema, proposePlanRequestSchema } from '../../plans/index.js'
import { plural } from '../summaries.js'
import { AGENT_RULES, defineTool, READ_ONLY } from '../tool.js'
import { selectionIdSchema } from './selections.js'

export const planIdSchema = z.string().min(1).max(200).describe('a plan_id, exactly as propose_change gave it')

/** The review page as a person can open it: absolute when the config names the server's public URL. */
export function reviewLink(url: string, publicUrl: string | null | undefined): string {
  if (!publicUrl || !url.startsWith('/')) return `${url}${url.startsWith('/') ? " (on this Warrant server's web address)" : ''}`
  return new URL(url, publicUrl).toString()
}

const NO_APPROVING = 'No tool approves: a person approves or rejects on the review page.'

/**
 * A plan's summary: the evidence's completeness first, then what the plan does, where, and what approval
 * it needs or has.
 */
export function planSummary(plan: PlanView | PlanProposal, publicUrl?: string | null): string {
  const s = plan.selection
  const evidence = s.complete
    ? `COMPLETE selection (${plural(s.count, 'record')}, digest ${s.digest})`
    : `INCOMPLETE selection (${plural(s.count, 'record')}): it can be reviewed, never committed; show its incomplete_reasons (read_selection) to the person`
  const params = Object.keys(plan.action.params).length ? ` ${JSON.stringify(plan.action.params)}` : ''
  const what = `plan ${plan.plan_id} (${plan.state}${'created' in plan && !plan.created ? ', already proposed: the existing plan' : ''}) applies ${plan.action.type}${params} to ${plural(plan.target_count, 'target')} of ${plan.resource} in ${plan.environment}; plan_digest ${plan.plan_digest}.`
  const a = plan.approval_state
  let approval: string
  if (plan.state === 'committed') approval = 'It has been committed: read the operation with get_operation.'
  else if (plan.state === 'rejected') approval = `It was rejected${a.rejected_by ? ` by ${a.rejected_by.name ?? a.rejected_by.principal}${a.rejected_by.comment ? ` ("${a.rejected_by.comment}")` : ''}` : ''}: do not commit; propose something else or ask the person.`
  else if (plan.state === 'expired') approval = 'It has expired with its selection: create a new selection and propose again.'
  else if (a.approved)
    approval = `Approved by ${a.approved_by.map((p) => p.name ?? p.principal).join(', ')}${a.approved_by[0]?.expires_at ? ` until ${a.approved_by[0].expires_at}` : ''}: commit with commit_change (plan_id, expected_digest = plan_digest, a new idempotency_key).`
  else
    approval = `Needs approval: ${plan.approval.required.replace(/_/g, ' ')} (${plan.approval.reason}); ${a.still_needed} still needed; ${a.who_can_approve}. Give the person the review page ${reviewLink(plan.review_url, publicUrl)} and wait; check with get_plan. ${NO_APPROVING}`
  const skipped = plan.precondition.failing_now ? ` ${plural(plan.precondition.failing_now, 'member')} already fail the precondition and would be skipped.` : ''
  return `${evidence}: ${what} ${approval}${skipped}`
}

export const proposeChange = defineTool({
  name: 'propose_change',
  title: 'Propose a change on a selection',
  description: [
    "Bind a frozen selection to one action from the resource's catalogue (list_resources shows the actions and their params): the plan shows each record's before and after, its plan_digest covers selection, action and environment, and it says what approval it needs and where a person reviews it (review_url).",
    'Proposing changes nothing upstream. ' + NO_APPROVING + ' Proposing the same action on the same selection again returns the same plan.',
    'Same answer as POST /v1/selections/{id}/plans.',
    AGENT_RULES,
  ].join('\n'),
  input: z.strictObject({ selection_id: selectionIdSchema, ...proposePlanRequestSchema.shape }),
  output: planProposalSchema,
  annotations: { title: 'Propose a change', readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run({ selection_id, action }, { gateway, actor }): Promise<PlanProposal> {
    return gateway.plans.propose(actor, selection_id, { action })
  },
  summarize: (plan, _args, { gateway }) => planSummary(plan, gateway.config.server.public_url),
})

const getPlanInput = z.strictObject({
  plan_id: planIdSchema,
  part: z.enum(['overview', 'changes']).default('overview').describe("overview: the plan, its approval policy and approval state; changes: a page of per-record before → after"),
  cursor: z.string().max(4096).optional().describe('for changes: next_cursor of the previous page, exactly as given'),
  limit: z.number().int().min(1).max(1000).default(100).describe('for changes: records per page'),
})

export const getPlan = defineTool({
  name: 'get_plan',
  title: 'Read a plan and its approval state',
  description: [
    'Read a plan: its state (pending, approved, rejected, expired, committed), the approval policy, who approved and until when, how many approvals are still needed, the review page; or a page of per-record changes.',
    NO_APPROVING,
    'Same answers as GET /v1/plans/{id} and GET /v1/plans/{id}/changes.',
    AGENT_RULES,
  ].join('\n'),
  input: getPlanInput,
  output: z.union([planViewSchema, changesPageSchema]),
  annotations: { title: 'Read a plan', ...READ_ONLY },
  async run(args, { gateway, actor }): Promise<PlanView | ChangesPage> {
    if (args.part === 'changes') return gateway.plans.changes(actor, args.plan_id, { ...(args.cursor === undefined ? {} : { cursor: args.cursor }), limit: args.limit })
    return gateway.plans.view(actor, args.plan_id)
  },
  summarize(answer, args, { gateway }) {
    if (args.part === 'overview') return planSummary(answer as PlanView, gateway.config.server.public_url)
    const page = answer as ChangesPage
    return `${page.next_cursor ? 'MORE PAGES' : 'LAST PAGE'}: per-record changes of ${plural(page.changes.length, 'record')} of the ${page.target_count} targets of plan ${page.plan_id} (plan_digest ${page.plan_digest}); ${page.next_cursor ? 'call again with cursor = next_cursor, unchanged, for the rest' : 'nothing follows'}.`
  },
})

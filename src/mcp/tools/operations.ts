import { z } from 'zod'
import {
  type CommitReceipt,
  commitReceiptSchema,
  FINISHED_STATES,
  type OperationView,
  operationViewSchema,
  type ResultsPage,
  resultsPageSchema,
  TARGET_STATES,
} from '../../operations/index.js'
import { actionRequestSchema, type PlanProposal, planProposalSchema } from '../../plans/index.js'
import { plural } from '../summaries.js'
import { AGENT_RULES, defineTool, READ_ONLY } from '../tool.js'
import { planSummary } from './plans.js'
import { resourceNameSchema } from './resources.js'
import { selectionIdSchema } from './selections.js'

export const operationIdSchema = z.string().min(1).max(200).describe('an operation_id, exactly as commit_change gave it')

const idempotencyKeySchema = z.string().min(1).max(255).describe('a key you generate once for this commit (e.g. a UUID); reuse it only to retry exactly the same commit, which then returns the same operation')

/**
 * commit_change's arguments. Two forms, as on HTTP: `plan_id` (POST /v1/plans/{id}/commit, expected_digest =
 * the plan_digest) or `selection_id` + `resource` + `action` (POST /v1/resources/{resource}/bulk-actions,
 * expected_digest = the selection digest). The idempotency key is parsed as optional so that a missing one
 * is refused by the service with HTTP's own code, `idempotency_key_missing`; the advertised schema requires it.
 */
const commitShape = {
  plan_id: z.string().min(1).max(200).optional().describe("the approved plan to commit; expected_digest is then its plan_digest (or its selection's digest)"),
  selection_id: selectionIdSchema.optional().describe("the article's form: the selection to commit, with resource and action; expected_digest is then the selection digest"),
  resource: resourceNameSchema.optional().describe('with selection_id: the resource of the selection'),
  action: actionRequestSchema.optional().describe('with selection_id: the action the plan was approved for, {type, params}'),
  expected_digest: z.string().min(1).max(200).describe("the digest the reviewer approved, exactly as a result gave it: the plan_digest with plan_id (the selection's digest is also accepted), the selection digest with selection_id"),
}

const oneForm = (args: { plan_id?: string | undefined; selection_id?: string | undefined; resource?: string | undefined; action?: unknown }, ctx: z.RefinementCtx) => {
  if ((args.plan_id === undefined) === (args.selection_id === undefined))
    ctx.addIssue({ code: 'custom', path: ['plan_id'], message: 'give exactly one of plan_id or selection_id' })
  if (args.selection_id !== undefined) {
    if (args.resource === undefined) ctx.addIssue({ code: 'custom', path: ['resource'], message: 'required with selection_id' })
    if (args.action === undefined) ctx.addIssue({ code: 'custom', path: ['action'], message: 'required with selection_id' })
  }
}

const commitInput = z.strictObject({ ...commitShape, idempotency_key: idempotencyKeySchema.optional() }).superRefine(oneForm)
const commitAdvertised = z.strictObject({ ...commitShape, idempotency_key: idempotencyKeySchema })

export const commitChange = defineTool({
  name: 'commit_change',
  title: 'Commit an approved change',
  description: [
    'Commit a plan a person has approved: the gateway re-reads each target, checks the precondition and version, writes conditionally, and records succeeded, failed, skipped or unknown for each. Requires plan_id (or selection_id + resource + action), expected_digest and idempotency_key.',
    'Refused, with nothing written, when the plan is not approved (not_approved), the digest differs (digest_mismatch), the selection or approval expired (expired), the selection is incomplete (selection_incomplete), or it is outside your scope (forbidden).',
    'The same idempotency_key returns the same operation: retry with it after a timeout instead of committing again. A commit is not a success report: read the per-target outcomes with get_operation.',
    'Same answer as POST /v1/plans/{id}/commit (or POST /v1/resources/{resource}/bulk-actions) with an Idempotency-Key header.',
    AGENT_RULES,
  ].join('\n'),
  input: commitInput,
  advertisedInput: commitAdvertised,
  output: commitReceiptSchema,
  annotations: { title: 'Commit an approved change', readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  async run(args, { gateway, actor }): Promise<CommitReceipt> {
    const idempotencyKey = args.idempotency_key ?? null
    if (args.plan_id !== undefined) return gateway.operations.commitPlan(actor, args.plan_id, { idempotencyKey, expectedDigest: args.expected_digest })
    return gateway.operations.commitBulkAction(actor, args.resource!, {
      idempotencyKey,
      body: { selection_id: args.selection_id, expected_digest: args.expected_digest, action: args.action },
    })
  },
  summarize(receipt) {
    const head = receipt.created ? `COMMITTED: operation ${receipt.operation_id}` : `ALREADY COMMITTED with this idempotency_key: operation ${receipt.operation_id} (nothing new was started)`
    return `${head}, status ${receipt.status}, ${plural(receipt.target_count, 'target')} of plan ${receipt.plan_id}. This is not a result: partial execution is the usual failure, so read the counts and per-target outcomes with get_operation (operation_id ${receipt.operation_id}) until it is finished, and report succeeded, failed, skipped and unknown separately.`
  },
})

const getOperationInput = z
  .strictObject({
    operation_id: operationIdSchema,
    part: z.enum(['overview', 'results']).default('overview').describe('overview: state, counts per outcome, halt reason, stop rules; results: a page of per-target outcomes'),
    outcome: z.enum(TARGET_STATES).optional().describe('for results: only targets with this outcome'),
    cursor: z.string().max(1000).optional().describe('for results: next_cursor of the previous page, exactly as given'),
    limit: z.number().int().min(1).max(1000).optional().describe('for results: results per page, default 100'),
    wait_ms: z.number().int().min(0).max(30_000).default(0).describe('for overview: wait up to this long for the operation to finish before answering'),
  })

/** The operation's summary: finished or not first, then counts per outcome and the halt reason. */
export function operationSummary(op: OperationView): string {
  const finished = FINISHED_STATES.has(op.state)
  const c = op.counts
  const counts = TARGET_STATES.filter((s) => c[s] > 0).map((s) => `${c[s]} ${s}`).join(', ') || 'no targets'
  const head = finished ? `FINISHED (${op.state})` : `NOT FINISHED (${op.state})`
  const halt = op.halt_reason ? ` Halted by stop rule ${op.halt_reason.rule}${op.halt_reason.target_id ? ` at target ${op.halt_reason.target_id}` : ''}: ${op.halt_reason.message}; later targets stay pending and were not written.` : ''
  const unknown = c.unknown > 0 ? ` ${plural(c.unknown, 'target')} ended unknown (no durable answer): never retry them blindly; they are reported for review and reconciliation.` : ''
  const next = finished ? ' Report each outcome separately (get_operation with part "results" and outcome lists them); propose_compensation proposes undoing the succeeded ones.' : ' Call get_operation again (wait_ms helps) until it is finished.'
  return `${head}: operation ${op.operation_id}, ${plural(op.target_count, 'target')} of ${op.resource ?? 'the resource'} in ${op.environment ?? 'its environment'}: ${counts}.${halt}${unknown}${next}`
}

export const getOperation = defineTool({
  name: 'get_operation',
  title: 'Read an operation and its per-target outcomes',
  description: [
    'Read a committed operation: its state, counts per outcome (succeeded, failed, skipped, unknown, pending, in_flight), the halt reason and stop rules; or a page of per-target results, optionally one outcome.',
    'An operation is finished when its state is succeeded, completed_with_skips, completed_with_unknown, partially_failed, failed or halted (each named for what happened: skipped targets were not written, unknown ones may have been). Report the outcomes separately; never turn a partial result into "done". Targets ending unknown are never retried blindly.',
    'Same answers as GET /v1/operations/{id} and GET /v1/operations/{id}/results?outcome=.',
    AGENT_RULES,
  ].join('\n'),
  input: getOperationInput,
  output: z.union([operationViewSchema, resultsPageSchema]),
  annotations: { title: 'Read an operation', ...READ_ONLY },
  async run(args, { gateway, actor }): Promise<OperationView | ResultsPage> {
    if (args.part === 'results')
      return gateway.operations.results(actor, args.operation_id, {
        ...(args.outcome ? { outcome: args.outcome } : {}),
        ...(args.cursor ? { cursor: args.cursor } : {}),
        ...(args.limit ? { limit: args.limit } : {}),
      })
    const view = await gateway.operations.get(actor, args.operation_id)
    if (args.wait_ms > 0 && !FINISHED_STATES.has(view.state)) {
      await gateway.operations.waitFor(args.operation_id, args.wait_ms)
      return gateway.operations.get(actor, args.operation_id)
    }
    return view
  },
  summarize(answer, args) {
    if (args.part === 'overview') return operationSummary(answer as OperationView)
    const page = answer as ResultsPage
    const byOutcome = TARGET_STATES.map((s) => [s, page.results.filter((r) => r.outcome === s).length] as const).filter(([, n]) => n > 0)
    return `${page.next_cursor ? 'MORE PAGES' : 'LAST PAGE'}: ${plural(page.results.length, 'per-target result')} of operation ${page.operation_id}${page.outcome ? ` with outcome ${page.outcome}` : ''}${byOutcome.length ? ` (${byOutcome.map(([s, n]) => `${n} ${s}`).join(', ')})` : ''}; ${page.next_cursor ? 'call again with cursor = next_cursor, unchanged, for the rest' : 'nothing follows'}. The counts per outcome are in get_operation's overview.`
  },
})

export const proposeCompensation = defineTool({
  name: 'propose_compensation',
  title: 'Propose undoing an operation',
  description: [
    "Propose a new plan that restores each succeeded target's before-value, with the precondition that the target still holds the value the operation wrote. It needs a person's approval like any plan (review_url), then commit_change.",
    'Proposing changes nothing upstream. No tool approves.',
    'Same answer as POST /v1/operations/{id}/compensation.',
    AGENT_RULES,
  ].join('\n'),
  input: z.strictObject({ operation_id: operationIdSchema }),
  output: planProposalSchema,
  annotations: { title: 'Propose undoing an operation', readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async run({ operation_id }, { gateway, actor }): Promise<PlanProposal> {
    return (await gateway.operations.proposeCompensation(actor, operation_id)) as PlanProposal
  },
  summarize: (plan, _args, { gateway }) => `Compensation proposed. ${planSummary(plan, gateway.config.server.public_url)}`,
})

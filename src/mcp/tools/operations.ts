import { z } from 'zod'
import { notRestorableText, restorabilityOf } from '../../config/index.js'
import { type Actor, cursorArgument, WarrantError } from '../../contract/index.js'
import type { Gateway } from '../../gateway/index.js'
import {
  askedAgainText,
  type CommitReceipt,
  commitReceiptSchema,
  FINISHED_STATES,
  type OperationService,
  type OperationView,
  operationViewSchema,
  type ResultsPage,
  resultsPageSchema,
  TARGET_STATES,
  waitWords,
} from '../../operations/index.js'
import { actionConfigOf, actionRequestSchema, COMPENSATE, type PlanProposal, planProposalSchema } from '../../plans/index.js'
import { plural, quoted } from '../summaries.js'
import { defineTool, READ_ONLY, readOnlyBy, RULES_BRIEF } from '../tool.js'
import { planSummary } from './plans.js'
import { resourceNameSchema } from './resources.js'
import { selectionIdSchema } from './selections.js'

export const operationIdSchema = z.string().min(1).max(200).describe('from commit_change')

const idempotencyKeySchema = z.string().min(1).max(255).describe('a new UUID per commit; reuse it only to retry the same commit')

/**
 * commit_change's arguments. Two forms, as on HTTP: `plan_id` (POST /v1/plans/{id}/commit, expected_digest =
 * the plan_digest) or `selection_id` + `resource` + `action` (POST /v1/resources/{resource}/bulk-actions,
 * expected_digest = the selection digest). The idempotency key is parsed as optional so that a missing one
 * is refused by the service with HTTP's own code, `idempotency_key_missing`; the advertised schema requires it.
 */
const commitShape = {
  plan_id: z.string().min(1).max(200).optional().describe("the approved plan"),
  selection_id: selectionIdSchema.optional().describe("instead of plan_id: the selection, with resource and action"),
  resource: resourceNameSchema.optional().describe('with selection_id: its resource'),
  action: actionRequestSchema.optional().describe('with selection_id: the approved action'),
  expected_digest: z.string().min(1).max(200).describe("the approved digest: plan_digest with plan_id, the selection digest with selection_id"),
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
  // Same answer as POST /v1/plans/{id}/commit (or POST /v1/resources/{resource}/bulk-actions) with an Idempotency-Key header.
  description: [
    'Commit an approved plan: each target re-read and written conditionally; refused unless approved for this digest and unexpired. Retry with the same idempotency_key; read outcomes with get_operation.',
    RULES_BRIEF,
  ].join('\n'),
  input: commitInput,
  advertisedInput: commitAdvertised,
  output: commitReceiptSchema,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  // Takes no cancel signal (ToolContext.signal): writes already sent are never stopped by an MCP cancel, and an
  // operation keeps running once committed; a cancelled call's row says `tool_finished: true` with its operation_id.
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
    return `${head}, status ${receipt.status}, ${plural(receipt.target_count, 'target')} of plan ${receipt.plan_id}. This is not a result: partial execution is the usual failure, so read the counts and per-target outcomes with get_operation (operation_id ${receipt.operation_id}) until it is finished, and report succeeded, failed, skipped and unknown separately. Cancelling a call does not stop an operation once committed.`
  },
})

const getOperationInput = z
  .strictObject({
    operation_id: operationIdSchema,
    part: z.enum(['overview', 'results']).default('overview').describe('overview; results: a page of per-target outcomes'),
    outcome: z.enum(TARGET_STATES).optional().describe('results: only this outcome'),
    cursor: cursorArgument(1000).optional().describe('next_cursor of the previous page; leave it out for the first (null and "" are refused)'),
    limit: z.number().int().min(1).max(1000).optional().describe('results: per page, default 100'),
    wait_ms: z.number().int().min(0).max(30_000).optional().describe('overview: wait up to this long for it to finish'),
  })
  .superRefine(readOnlyBy({ outcome: ['results'], cursor: ['results'], limit: ['results'], wait_ms: ['overview'] }))

const COMPENSATION_OFFER = ' propose_compensation proposes undoing the succeeded ones.'

/**
 * What to tell of compensating a finished operation: whether propose_compensation can propose one, judged by
 * `restorabilityOf` on its action as the config defines it now (as the operation page judges it), and why not in
 * the words of propose_compensation's refusal (`notRestorableText`). Where the action cannot be judged here (no
 * longer configured, its resource gone), says so instead of offering what may be refused.
 */
export function compensationHint(gateway: Pick<Gateway, 'catalogue'>, op: Pick<OperationView, 'resource' | 'action'>): string {
  if (op.resource === null || op.action === null) return COMPENSATION_OFFER
  try {
    const compensates = op.action.type === COMPENSATE ? String(op.action.params.operation_id ?? op.action.type) : null
    const config = actionConfigOf(gateway, { resource: op.resource, action: op.action, compensates })
    const why = notRestorableText(op.action.type, restorabilityOf(config.reversible, config.write))
    return why === null ? COMPENSATION_OFFER : ` No compensation can be proposed: ${why}; the before-values stay in the results, to restore by other means.`
  } catch (error) {
    if (!(error instanceof WarrantError)) throw error
    return ` Whether a compensation can be proposed could not be judged here (${error.message}); propose_compensation says.`
  }
}

/** The operation's summary: finished or not first, then counts per outcome and the halt reason. */
export function operationSummary(op: OperationView, compensation = COMPENSATION_OFFER): string {
  const finished = FINISHED_STATES.has(op.state)
  const c = op.counts
  const counts = TARGET_STATES.filter((s) => c[s] > 0).map((s) => `${c[s]} ${s}`).join(', ') || 'no targets'
  const head = finished ? `FINISHED (${op.state})` : `NOT FINISHED (${op.state})`
  const halt = op.halt_reason ? ` Halted by stop rule ${op.halt_reason.rule}${op.halt_reason.target_id ? ` at target ${quoted(op.halt_reason.target_id)}` : ''}: ${quoted(op.halt_reason.message)}; later targets stay pending and were not written.` : ''
  const words = waitWords(op.rate_limit_kind)
  const paused = op.paused ? ` Paused until ${op.paused.until}: ${words.paused} (${quoted(op.paused.reason)}); no write is sent before then, and it goes on by itself.` : ''
  const throttled = op.rate_limit_hits > 0 ? ` ${words.answered.charAt(0).toUpperCase()}${words.answered.slice(1)} ${plural(op.rate_limit_hits, 'time')} on ${plural(op.rate_limited_targets, 'target')}: ${words.each} and ${askedAgainText(op)} (rate_limit_hits per target in the results).` : ''
  const unknown = c.unknown > 0 ? ` ${plural(c.unknown, 'target')} ended unknown (no durable answer): never retry them blindly; they are reported for review and reconciliation.` : ''
  const next = finished ? ` Report each outcome separately (get_operation with part "results" and outcome lists them).${compensation}` : ' Call get_operation again (wait_ms helps) until it is finished.'
  const proposed = (['remainder', 'compensation'] as const).flatMap((k) => {
    const f = op.follow_ups[k]
    return f ? [`its ${k === 'remainder' ? 'rest' : k} is plan ${f.plan_id} (${f.state}${f.operation_id ? `, run as operation ${f.operation_id}` : ''})`] : []
  })
  const follows = proposed.length > 0 ? ` Already proposed: ${proposed.join('; ')}; proposing again answers the same plan.` : ''
  return `${head}: operation ${op.operation_id}, ${plural(op.target_count, 'target')} of ${op.resource ?? 'the resource'} in ${op.environment ?? 'its environment'}: ${counts}.${paused}${throttled}${halt}${unknown}${next}${follows}`
}

/**
 * The page's reasons, each with its count and its words: a write the upstream refused is told from one never sent
 * or sent and rolled back, without knowing the codes. Empty when no result has a reason.
 */
function reasonsOf(page: ResultsPage): string {
  // by its words too: one code may be said two ways (a pending `rate_limited` whose write was sent, or not)
  const seen = new Map<string, { count: number; key: string; text: string }>()
  for (const r of page.results) {
    if (r.reason === null) continue
    const key = `${r.outcome} ${r.reason}`
    const text = r.reason_text ?? r.reason
    const entry = seen.get(`${key}\n${text}`)
    if (entry) entry.count += 1
    else seen.set(`${key}\n${text}`, { count: 1, key, text })
  }
  if (seen.size === 0) return ''
  return ` Reasons: ${[...seen.values()].map(({ count, key, text }) => `${count} ${key} (${text})`).join('; ')}.`
}

export const getOperation = defineTool({
  name: 'get_operation',
  title: 'Read an operation and its per-target outcomes',
  // Same answers as GET /v1/operations/{id} and GET /v1/operations/{id}/results?outcome=.
  description: [
    'Read an operation: state, counts per outcome, halt reason; or a page of per-target results. Report succeeded, failed, skipped and unknown separately, never as "done"; never retry unknown targets blindly.',
    RULES_BRIEF,
  ].join('\n'),
  input: getOperationInput,
  output: z.union([operationViewSchema, resultsPageSchema]),
  annotations: { ...READ_ONLY },
  async run(args, { gateway, actor, signal }): Promise<OperationView | ResultsPage> {
    if (args.part === 'results')
      return gateway.operations.results(actor, args.operation_id, {
        ...(args.outcome ? { outcome: args.outcome } : {}),
        ...(args.cursor ? { cursor: args.cursor } : {}),
        ...(args.limit ? { limit: args.limit } : {}),
      })
    const view = await gateway.operations.get(actor, args.operation_id)
    if (args.wait_ms !== undefined && args.wait_ms > 0 && !FINISHED_STATES.has(view.state)) {
      // a wait of up to 30 s ends at the client's cancel or the server's shutdown: the row then says which
      await gateway.operations.waitFor(args.operation_id, args.wait_ms, signal)
      signal?.throwIfAborted()
      return gateway.operations.get(actor, args.operation_id)
    }
    return view
  },
  summarize(answer, args, { gateway }) {
    if (args.part === 'overview') return operationSummary(answer as OperationView, compensationHint(gateway, answer as OperationView))
    const page = answer as ResultsPage
    const byOutcome = TARGET_STATES.map((s) => [s, page.results.filter((r) => r.outcome === s).length] as const).filter(([, n]) => n > 0)
    const throttled = page.results.filter((r) => r.rate_limit_hits > 0)
    const hits = throttled.reduce((sum, r) => sum + r.rate_limit_hits, 0)
    const waited = throttled.length > 0 ? ` ${plural(throttled.length, 'target')} of this page met ${waitWords(page.rate_limit_kind).met} ${plural(hits, 'time')} in all (rate_limit_hits).` : ''
    return `${page.next_cursor ? 'MORE PAGES' : 'LAST PAGE'}: ${plural(page.results.length, 'per-target result')} of operation ${page.operation_id}${page.outcome ? ` with outcome ${page.outcome}` : ''}${byOutcome.length ? ` (${byOutcome.map(([s, n]) => `${n} ${s}`).join(', ')})` : ''}; ${page.next_cursor ? 'call again with cursor = next_cursor, unchanged, for the rest' : 'nothing follows'}.${reasonsOf(page)}${waited} The counts per outcome are in get_operation's overview.`
  },
})

/** A plan proposed from an operation (its compensation, its remainder): the same answer as the HTTP route named. */
function proposalTool(spec: {
  readonly name: string
  readonly title: string
  readonly description: string
  readonly idempotent: boolean
  readonly propose: (operations: OperationService, actor: Actor, operationId: string) => Promise<unknown>
  readonly done: string
}) {
  return defineTool({
    name: spec.name,
    title: spec.title,
    description: [spec.description, RULES_BRIEF].join('\n'),
    input: z.strictObject({ operation_id: operationIdSchema }),
    output: planProposalSchema,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: spec.idempotent, openWorldHint: false },
    async run({ operation_id }, { gateway, actor }): Promise<PlanProposal> {
      return (await spec.propose(gateway.operations, actor, operation_id)) as PlanProposal
    },
    summarize: (plan) => `${spec.done} ${planSummary(plan)}`,
  })
}

// Same answer as POST /v1/operations/{id}/compensation.
export const proposeCompensation = proposalTool({
  name: 'propose_compensation',
  title: 'Propose undoing an operation',
  description:
    "Propose a plan restoring each target the operation changed (every succeeded target, and a failed one whose write changed the record otherwise than approved) to its before-value, where it still holds what the operation wrote. A person approves it (review_url), then commit_change. No tool approves.",
  idempotent: false,
  propose: (operations, actor, id) => operations.proposeCompensation(actor, id),
  done: 'Compensation proposed.',
})

// Same answer as POST /v1/operations/{id}/remainder.
export const proposeRemainder = proposalTool({
  name: 'propose_remainder',
  title: 'Propose the rest of a halted operation',
  description:
    "Propose the rest of a halted operation: the same action over its pending targets at their frozen versions; of a compensation, its before-values restored on the targets it did not finish. A person approves it; commit under a new key.",
  idempotent: true,
  propose: (operations, actor, id) => operations.proposeRemainder(actor, id),
  done: 'Remainder proposed.',
})

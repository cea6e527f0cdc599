import type { Actor } from '../contract/index.js'
import type { Gateway } from '../gateway/index.js'
import { answerSummary, boundedSummary, markRequestAudited } from '../audit/index.js'
import type { ToolAnswer, ToolRefusal } from './results.js'

const ID_KEYS = ['selection_id', 'plan_id', 'operation_id'] as const
const MAX_SUMMARY_ARGS = 4096

/** A call the client cancelled while its tool ran: the cancel's reason, and how far a walking tool's walk got. */
export interface ToolCancellation {
  /** `client`: its notifications/cancelled; `server`: the server closed (a shutdown) while it ran */
  readonly by: 'client' | 'server'
  readonly reason?: string
  readonly walk?: { readonly pages_read: number; readonly stopped_early: boolean }
}

/**
 * The run-level audit event of one tool call: who (principal, surface `mcp`), which tool, a summary of the
 * arguments, the outcome (`ok` or the refusal's code), what a listing answered (items, complete, reason codes), and the selection, plan and operation it touched.
 * A call the client cancelled (`cancelled`) got no answer: outcome `client_closed` (the word every answer the client
 * left before it got uses, as stdio's `stdio:tools/call` row), `cancelled: {by: "client", reason}`, or `failed` with
 * `cancelled: {by: "server"}` when the server closed under it (a shutdown; the word a cut stream uses), `tool_finished`
 * (false: stopped by the cancel, `result` null; true: it ran to its end, as a commit already sent does, and what it
 * answered or refused follows), and a walking tool's `walk: {pages_read, stopped_early}`.
 * Recording never fails the call: a fault is logged and the agent still gets its answer.
 */
export async function auditToolCall(gateway: Gateway, actor: Actor | null, tool: string, args: unknown, result: ToolAnswer | ToolRefusal | null, cancelled?: ToolCancellation): Promise<void> {
  try {
    const answer = result?.structuredContent
    const ids: Partial<Record<(typeof ID_KEYS)[number], string>> = {}
    for (const key of ID_KEYS) {
      const value = pick(answer, key) ?? pick(args, key)
      if (typeof value === 'string') ids[key] = value
    }
    markRequestAudited()
    await gateway.audit.record({
      actor,
      surface: 'mcp',
      action: `mcp:${tool}`,
      summary: {
        arguments: boundedSummary(args ?? null, MAX_SUMMARY_ARGS),
        // a listing's answer as the agent got it (the HTTP row's own summary): an agent that acted on a cut one shows as such
        ...(result === null ? {} : result.isError ? { outcome: 'refused', error: result.structuredContent.error.code } : { outcome: 'ok', ...answerSummary(answer) }),
        // cancelled: no answer left, whatever the tool did; the outcome says so
        ...(cancelled ? cancellationSummary(cancelled, result !== null) : {}),
      },
      selection_id: ids.selection_id ?? null,
      plan_id: ids.plan_id ?? null,
      operation_id: ids.operation_id ?? null,
    })
  } catch (error) {
    gateway.log.error({ err: error, tool }, 'audit trail: could not record an MCP tool call')
  }
}

function cancellationSummary(cancelled: ToolCancellation, finished: boolean): Record<string, unknown> {
  const reason = cancelled.reason === undefined ? {} : { reason: cancelled.reason.slice(0, 500) }
  return {
    outcome: cancelled.by === 'client' ? 'client_closed' : 'failed',
    cancelled: { by: cancelled.by, ...reason },
    tool_finished: finished,
    ...(cancelled.walk ? { walk: cancelled.walk } : {}),
  }
}

function pick(value: unknown, key: string): unknown {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>)[key] : undefined
}

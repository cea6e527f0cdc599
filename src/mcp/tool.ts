import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js'
import type { z } from 'zod'
import type { Actor } from '../contract/index.js'
import type { Gateway } from '../gateway/index.js'

/**
 * How far a tool's upstream walk got, kept as it reads: a call cancelled mid-walk records it (audit.ts). Only a tool
 * that walks sets it; `pages` counts the pages whose records the walk handed over.
 */
export interface WalkTally {
  walked: boolean
  pages: number
  /** the service's walk returned: a cancel after it stopped nothing upstream */
  finished: boolean
}

/** What a tool runs with: the gateway every surface shares, and who is asking. */
export interface ToolContext {
  readonly gateway: Gateway
  readonly actor: Actor
  /**
   * The client's cancellation: the SDK's `RequestHandlerExtra.signal`, aborted by `notifications/cancelled` naming
   * this call (or the connection closing). A read walk (search, create_selection) stops at it and leaves nothing
   * behind; a write already sent (commit_change) never takes it: an operation keeps running once committed.
   */
  readonly signal?: AbortSignal
  readonly walk?: WalkTally
}

/**
 * One MCP tool. `input` is the request schema of the HTTP route it mirrors (plus the route's path
 * parameters); `output` is that route's response schema; `run` calls the same service function the route
 * calls and returns its response body unchanged.
 */
export interface ToolDefinition<I extends z.ZodObject = z.ZodObject, O = unknown> {
  readonly name: string
  readonly title: string
  readonly description: string
  readonly input: I
  /**
   * The schema `tools/list` shows, when it must be stricter than what `input` parses: a field the HTTP
   * route refuses with its own code (e.g. `idempotency_key_missing`) is parsed as optional and left to the
   * service, so both surfaces answer it with the same code.
   */
  readonly advertisedInput?: z.ZodObject
  /**
   * The HTTP route's response schema. Not advertised in full (see toolOutputSchema: context budget); the MCP
   * tests parse every answer's structuredContent with it.
   */
  readonly output: z.ZodType
  readonly annotations: ToolAnnotations
  run(args: z.output<I>, context: ToolContext): Promise<O>
  /** The first text block: completeness (or state) first, short and honest. */
  summarize(result: O, args: z.output<I>, context: ToolContext): string
}

/** Keeps each tool's argument and result types checked while the list holds tools of different types. */
export function defineTool<I extends z.ZodObject, O>(tool: ToolDefinition<I, O>): ToolDefinition {
  return tool as unknown as ToolDefinition
}

/**
 * The article's agent rules, in full in the server's instructions (sent once, with `initialize`); each
 * tool's description carries RULES_BRIEF, since some hosts never show the instructions to the model.
 */
export const AGENT_RULES =
  'Agent rules: an empty result proves absence only when `complete` is true, and only if `scope.consistent_snapshot` is true or `scope.stability` is "proven" (otherwise records may have moved past the walk unseen). A partial result (complete: false) may feed a report or a read-only investigation, never a change based on absence. Show `incomplete_reasons` to the person before asking for any approval. Never invent, edit or guess a continuation cursor, id or digest: use only what a result gave you, and never claim a retry succeeded without its result. Follow a `retry_after` continuation only after its `not_before`.'

/** The rules in one line, for every tool's description: the full text would be paid nine times in tools/list. */
export const RULES_BRIEF =
  'Only complete: true proves absence; show incomplete_reasons before any approval; never invent cursors, ids, digests.'

export const READ_ONLY: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false }

/**
 * Refuses an argument the chosen `part` does not read (`uses`: argument → the parts that read it). Ignored, it
 * would answer another question than the one asked: a cursor given with the overview answered the overview's
 * first page again, however often the agent followed it, and an invented cursor passed unnoticed.
 *
 * @example z.strictObject({...}).superRefine(readOnlyBy({ cursor: ['records'] }))
 */
export function readOnlyBy(uses: Readonly<Record<string, readonly string[]>>) {
  return (args: Readonly<Record<string, unknown>>, ctx: z.RefinementCtx): void => {
    for (const [field, parts] of Object.entries(uses))
      if (args[field] !== undefined && !parts.includes(String(args.part)))
        ctx.addIssue({ code: 'custom', path: [field], message: `${field} is read only with part ${parts.map((p) => `"${p}"`).join(' or ')}, not with part "${String(args.part)}"; give that part or leave ${field} out` })
  }
}

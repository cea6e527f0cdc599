import type { ExpressionBuilder, ExpressionWrapper, SqlBool } from 'kysely'
import type { Database } from '../store/index.js'

/**
 * The actions that only read: every GET or HEAD (the HTTP API's and the review pages', the operation page's own view
 * and 2-second status poll among them) and the MCP tools and CLI commands that change nothing. A listing by id holds
 * each such request that named the id, so on a watched operation they outnumber, by far, the rows that acted.
 * Kept by hand (audit imports no surface); test/audit/read-actions.test.ts walks every MCP tool (its readOnlyHint)
 * and every CLI command and fails when this list misses a read or holds a write.
 */
const READ_METHODS = ['GET %', 'HEAD %'] as const
export const READ_ACTIONS = [
  'mcp:get_operation',
  'mcp:get_plan',
  'mcp:read_selection',
  'mcp:search',
  'mcp:list_resources',
  'cli:search',
  'cli:operation show',
  'cli:operation watch',
  'cli:operation results',
  'cli:audit verify',
  'cli:audit export',
  'cli:audit query',
  'cli:token list',
  'cli:principal list',
] as const

/**
 * A successful read: a run-level row of a read action whose summary says `"outcome":"ok"` and holds no refusal. Matched
 * on the summary's text (canonical JSON, as every surface writes it: a refusal's row holds `"outcome":"refused"` and
 * its `"error":`), so a row is a read only when its text holds no such member anywhere: a request that put those words
 * in its arguments is shown, never a refusal hidden. A refused read is a claim (who asked for what they may not see) and
 * is never a read here. LIKE, not a JSON function: a summary stored unparseable must not fail the listing.
 */
export function isSuccessfulRead(eb: ExpressionBuilder<Database, 'audit_events'>): ExpressionWrapper<Database, 'audit_events', SqlBool> {
  return eb.and([
    eb('level', '=', 'run'),
    eb.or([...READ_METHODS.map((m) => eb('action', 'like', m)), eb('action', 'in', READ_ACTIONS)]),
    eb('summary', 'like', '%"outcome":"ok"%'),
    eb('summary', 'not like', '%"outcome":"refused"%'),
    eb('summary', 'not like', '%"error":%'),
  ])
}

/** What a listing without reads says it left out: counted in the same query's span, so exact for the page shown. */
export interface ReadsLeftOut {
  /** successful reads (see {@link isSuccessfulRead}) matching the filter within the page's span */
  readonly count: number
  /** the span: rows with `after_seq < seq < before_seq`; null for an open end (the log's first row, or its head when the page was read) */
  readonly after_seq: number | null
  readonly before_seq: number | null
}

import type { Kysely, SelectQueryBuilder } from 'kysely'
import type { AuditLevel, Database } from '../store/index.js'
import { clampLimit, toListedEntry, type ListedAuditEntry } from './entry.js'
import { isSuccessfulRead, type ReadsLeftOut } from './reads.js'

export interface AuditQuery {
  readonly operation_id?: string
  readonly plan_id?: string
  readonly selection_id?: string
  readonly principal?: string
  readonly level?: AuditLevel
  /** ISO timestamp; `at >= since` */
  readonly since?: string
  /** ISO timestamp; `at < until` */
  readonly until?: string
  /** the previous page's `next_cursor` */
  readonly after_seq?: number
  /** the previous page's `next_cursor` when `newest_first`: rows before it */
  readonly before_seq?: number
  /** the newest rows first (a page's `next_cursor` is then passed as `before_seq`): the operation page's latest steps */
  readonly newest_first?: boolean
  /**
   * leave successful reads out (see {@link isSuccessfulRead}; a refused one is always listed), in the query, so a
   * page is still `limit` rows where more exist; the page then says how many it left out (`reads_left_out`)
   */
  readonly without_reads?: boolean
  /** 1..1000; default 100 */
  readonly limit?: number
}

export interface AuditPage {
  /** each marked `refused_claim` where its request was refused: listed by id, such a row is a claim, not the id's event */
  readonly events: ListedAuditEntry[]
  /** pass as `after_seq` (`before_seq` when `newest_first`) for the next page; null when this is the last */
  readonly next_cursor: number | null
  /** with `without_reads` only: the successful reads left out within this page's span */
  readonly reads_left_out?: ReadsLeftOut
  /** always false: the rows are listed as stored (see {@link UNVERIFIED_LISTING}) */
  readonly verified: false
  readonly verification: string
}

/**
 * What every listing of rows says of itself (`GET /v1/audit`, `warrant audit query`, who asked, the review pages).
 * A listing is not verified: checking its rows' own hashes would say nothing of rows removed between the ones it
 * matches, and checking that is a walk of the whole chain (7 s for 100,000 signed rows on SQLite or PostgreSQL, against 15 to 30 ms for a
 * page of 100), per request. So it says so and names the check that is made once, for the whole chain.
 */
export const UNVERIFIED_LISTING =
  'rows are listed as stored, not checked against the hash chain: a row altered, removed or inserted in the store is listed as it now reads. Run `warrant audit verify` (GET /v1/audit/verify) to check the chain'

const DEFAULT_QUERY_LIMIT = 100
const MAX_QUERY_LIMIT = 1000

export async function queryAuditLog(db: Kysely<Database>, filter: AuditQuery = {}): Promise<AuditPage> {
  const limit = clampLimit(filter.limit, DEFAULT_QUERY_LIMIT, MAX_QUERY_LIMIT)
  const desc = filter.newest_first === true
  // the head as the page is read: the page and its count of left-out reads stop there, so a read appended between the
  // two queries (this page's own status poll) is in neither, and the count is the page's
  const head = filter.without_reads ? ((await matching(db, filter).select((eb) => eb.fn.max('seq').as('head')).executeTakeFirst())?.head ?? null) : null
  let q = matching(db, filter)
    .selectAll()
    .orderBy('seq', desc ? 'desc' : 'asc')
    .limit(limit + 1)
  if (filter.after_seq !== undefined) q = q.where('seq', '>', filter.after_seq)
  if (filter.before_seq !== undefined) q = q.where('seq', '<', filter.before_seq)
  if (filter.without_reads) q = q.where('seq', '<=', Number(head ?? 0)).where((eb) => eb.not(isSuccessfulRead(eb)))
  const rows = await q.execute()
  const page = rows.slice(0, limit)
  const next_cursor = rows.length > limit ? page[page.length - 1]!.seq : null
  const listing = { events: page.map(toListedEntry), next_cursor, verified: false as const, verification: UNVERIFIED_LISTING }
  if (!filter.without_reads) return listing
  // the page's span: its own cursors, bounded by the next page's (none past the last page), up to the head read above
  const after = desc && next_cursor !== null ? next_cursor : (filter.after_seq ?? null)
  const before = !desc && next_cursor !== null ? next_cursor : (filter.before_seq ?? null)
  let c = matching(db, filter)
    .select((eb) => eb.fn.countAll().as('n'))
    .where('seq', '<=', Number(head ?? 0))
    .where((eb) => isSuccessfulRead(eb))
  // a next page's cursor lies within the page's own cursors, so it is the tighter bound
  if (after !== null) c = c.where('seq', '>', after)
  if (before !== null) c = c.where('seq', '<', before)
  const counted = await c.executeTakeFirst()
  return { ...listing, reads_left_out: { count: Number(counted?.n ?? 0), after_seq: after, before_seq: before } }
}

/** The rows the filter names, whatever the page: its ids, level and time bounds. */
function matching(db: Kysely<Database>, filter: AuditQuery): SelectQueryBuilder<Database, 'audit_events', {}> {
  let q = db.selectFrom('audit_events')
  if (filter.operation_id !== undefined) q = q.where('operation_id', '=', filter.operation_id)
  if (filter.plan_id !== undefined) q = q.where('plan_id', '=', filter.plan_id)
  if (filter.selection_id !== undefined) q = q.where('selection_id', '=', filter.selection_id)
  if (filter.principal !== undefined) q = q.where('principal', '=', filter.principal)
  if (filter.level !== undefined) q = q.where('level', '=', filter.level)
  if (filter.since !== undefined) q = q.where('at', '>=', filter.since)
  if (filter.until !== undefined) q = q.where('at', '<', filter.until)
  return q
}

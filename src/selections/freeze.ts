import { sql, type Kysely } from 'kysely'
import { WarrantError, createListDigest } from '../contract/index.js'
import type { SourceRecord } from '../connectors/index.js'
import type { SeenFilter } from '../inventory/index.js'
import type { Database, Store } from '../store/index.js'
import { GROUP_VALUES_MAX } from './group-tally.js'
import { compareIds } from './id-order.js'
import type { GroupCount } from './selection-service.js'


/**
 * What freezing needs besides writing the rows (`MemberWriter`): putting rows that arrived out of id order in
 * order, recomputing the digest from the store then, recognising records a walk returned twice, and counting
 * groups the writer could not keep in memory.
 */

/** Members read per query when recomputing a digest. */
const DIGEST_PAGE = 2000
/** Ids per `IN (…)` lookup. */
const LOOKUP_CHUNK = 500

/** A member's entry in the digest: id and version, nothing else. */
export function digestEntry(id: string, version: string | null): { id: string; version: string | null } {
  return { id, version }
}

/**
 * Gives every row its position in id order: first every ord of the selection turns negative (so no new
 * position can collide with an old one under the primary key), then each row gets its rank. Excluded records
 * are ranked within their rule.
 */
export async function renumber(db: Kysely<Database>, dialect: Store['dialect'], selectionId: string, table: 'selection_members' | 'selection_exclusions'): Promise<void> {
  const byId = dialect === 'postgres' ? sql`record_id collate "C"` : sql`record_id`
  await db.transaction().execute(async (trx) => {
    await sql`update ${sql.table(table)} set ord = -ord where selection_id = ${selectionId}`.execute(trx)
    if (table === 'selection_members')
      await sql`
        update selection_members set ord = ranked.rn
        from (select record_id, row_number() over (order by ${byId}) as rn from selection_members where selection_id = ${selectionId}) as ranked
        where selection_members.selection_id = ${selectionId} and selection_members.record_id = ranked.record_id`.execute(trx)
    else
      await sql`
        update selection_exclusions set ord = ranked.rn
        from (select rule, record_id, row_number() over (partition by rule order by ${byId}) as rn from selection_exclusions where selection_id = ${selectionId}) as ranked
        where selection_exclusions.selection_id = ${selectionId} and selection_exclusions.rule = ranked.rule and selection_exclusions.record_id = ranked.record_id`.execute(trx)
  })
}

/** The digest of the members as stored, read in ord order a page at a time. */
export async function recomputeDigest(db: Kysely<Database>, selectionId: string): Promise<string> {
  const digest = createListDigest()
  let after = 0
  for (;;) {
    const rows = await db
      .selectFrom('selection_members')
      .select(['ord', 'record_id', 'version'])
      .where('selection_id', '=', selectionId)
      .where('ord', '>', after)
      .orderBy('ord')
      .limit(DIGEST_PAGE)
      .execute()
    for (const row of rows) digest.add(digestEntry(row.record_id, row.version))
    if (rows.length < DIGEST_PAGE) return digest.finish()
    after = rows[rows.length - 1]!.ord
  }
}

/**
 * Recognises records a walk already returned, without keeping their ids in memory: while ids keep arriving
 * in ascending order (the usual case) nothing needs checking; otherwise the page's ids are looked up among the
 * rows already frozen for this selection. The same id from another source is refused: writes address a record
 * by id alone, so the two could not be told apart.
 */
export function storeSeenFilter(db: Kysely<Database>, selectionId: string, beforeLookup: () => Promise<void> = async () => undefined): SeenFilter {
  let last: string | null = null
  return {
    async fresh(source, records) {
      if (records.length === 0) return records
      let ascending = last === null || compareIds(records[0]!.id, last) > 0
      for (let i = 1; ascending && i < records.length; i++) if (compareIds(records[i]!.id, records[i - 1]!.id) <= 0) ascending = false
      if (ascending) {
        last = records[records.length - 1]!.id
        return records
      }
      // rows the writer still buffers must be in the store before it is asked
      await beforeLookup()
      const firstInPage = new Map<string, SourceRecord>()
      for (const record of records) if (!firstInPage.has(record.id)) firstInPage.set(record.id, record)
      const ids = [...firstInPage.keys()]
      const earlier = new Map<string, string | null>()
      for (let i = 0; i < ids.length; i += LOOKUP_CHUNK) {
        const chunk = ids.slice(i, i + LOOKUP_CHUNK)
        const rows = await db
          .selectFrom('selection_members')
          .select(['record_id', 'source'])
          .where('selection_id', '=', selectionId)
          .where('record_id', 'in', chunk)
          .unionAll(db.selectFrom('selection_exclusions').select(['record_id', 'source']).where('selection_id', '=', selectionId).where('record_id', 'in', chunk))
          .execute()
        for (const row of rows) earlier.set(row.record_id, row.source)
      }
      const fresh: SourceRecord[] = []
      for (const record of firstInPage.values()) {
        if (!earlier.has(record.id)) fresh.push(record)
        else if (earlier.get(record.id) !== source)
          throw new WarrantError(
            'conflict',
            `record id "${record.id}" was read from source "${earlier.get(record.id)}" and from source "${source}"; a change by id could not tell them apart, so no selection was made (narrow the filter to one source)`,
            { reason: 'duplicate_id', id: record.id, sources: [earlier.get(record.id), source] },
          )
      }
      for (const record of fresh) if (last === null || compareIds(record.id, last) > 0) last = record.id
      return fresh
    },
  }
}

/** Counts per value of each group-by field, computed in the database over the frozen members (fields with too many values to count in memory). */
export async function groupCounts(store: Store, selectionId: string, fields: readonly string[], total: number): Promise<GroupCount[]> {
  const out: GroupCount[] = []
  for (const field of fields) {
    const value =
      store.dialect === 'postgres' ? sql<string | null>`(cast(fields as jsonb) -> cast(${field} as text))::text` : sql<string | null>`(fields -> ${`$.${field}`})`
    const rows = await store.db
      .selectFrom('selection_members')
      .select([value.as('v'), sql<number>`count(*)`.as('n')])
      .where('selection_id', '=', selectionId)
      .groupBy(sql`1`)
      .orderBy(sql`2`, 'desc')
      .orderBy(sql`1`)
      .limit(GROUP_VALUES_MAX + 1)
      .execute()
    let distinct = rows.length
    if (rows.length > GROUP_VALUES_MAX) {
      const counted = await store.db
        .selectFrom(
          store.db
            .selectFrom('selection_members')
            .select(value.as('v'))
            .where('selection_id', '=', selectionId)
            .groupBy(sql`1`)
            .as('g'),
        )
        .select(sql<number>`count(*)`.as('n'))
        .executeTakeFirstOrThrow()
      distinct = Number(counted.n)
    }
    const listed = rows.slice(0, GROUP_VALUES_MAX).map((r) => ({ value: r.v === null ? null : (JSON.parse(r.v) as unknown), count: Number(r.n) }))
    const covered = listed.reduce((sum, v) => sum + v.count, 0)
    out.push({ field, values: listed, distinct, complete: distinct <= GROUP_VALUES_MAX, other_count: total - covered })
  }
  return out
}


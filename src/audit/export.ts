import type { Kysely } from 'kysely'
import type { Database } from '../store/index.js'
import { storedRow } from './chain.js'

const EXPORT_PAGE_SIZE = 1000

/**
 * Every row as stored, one JSON line each, ending in `\n`. `summary` and `details` stay JSON text so the
 * hashes can be recomputed from the export alone; paged so memory does not grow with the log.
 */
export async function* exportAuditNdjson(db: Kysely<Database>): AsyncIterable<string> {
  let after: number | null = null
  for (;;) {
    let q = db.selectFrom('audit_events').selectAll().orderBy('seq').limit(EXPORT_PAGE_SIZE)
    if (after !== null) q = q.where('seq', '>', after)
    const rows = await q.execute()
    for (const row of rows) yield `${JSON.stringify(storedRow(row))}\n`
    if (rows.length < EXPORT_PAGE_SIZE) return
    after = rows[rows.length - 1]!.seq
  }
}

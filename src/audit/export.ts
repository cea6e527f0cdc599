import type { Kysely } from 'kysely'
import type { Database } from '../store/index.js'
import { storedRow } from './chain.js'
import { readChainHead, type ChainHead } from './head.js'

const EXPORT_PAGE_SIZE = 1000

/** The `format` of an export's last line, which holds the chain head (see {@link ExportEnd}). */
export const EXPORT_FORMAT = 'warrant-audit-export/1'

/**
 * An export's last line: the chain head the rows end at (signed where the chain is keyed) and how many rows
 * precede it. Without it a copy cut back by whole lines looked as complete as the original.
 */
export interface ExportEnd {
  readonly format: typeof EXPORT_FORMAT
  readonly rows: number
  /** null when the store had no head (an empty log, or one whose head was removed) */
  readonly head: ChainHead | null
}

/**
 * Every row as stored, one JSON line each, then the end line ({@link ExportEnd}); every line ends in `\n`.
 * `summary` and `details` stay JSON text so the hashes can be recomputed from the export alone (`warrant audit
 * verify --file`); paged so memory does not grow with the log. The head is read first and rows up to it are
 * written, so rows appended meanwhile never leave the file ending past the head it states.
 */
export async function* exportAuditNdjson(db: Kysely<Database>): AsyncIterable<string> {
  const head = await readChainHead(db)
  let after: number | null = null
  let rows = 0
  for (;;) {
    let q = db.selectFrom('audit_events').selectAll().orderBy('seq').limit(EXPORT_PAGE_SIZE)
    if (after !== null) q = q.where('seq', '>', after)
    if (head !== null) q = q.where('seq', '<=', head.seq)
    const page = await q.execute()
    for (const row of page) yield `${JSON.stringify(storedRow(row))}\n`
    rows += page.length
    if (page.length < EXPORT_PAGE_SIZE) break
    after = page[page.length - 1]!.seq
  }
  const end: ExportEnd = { format: EXPORT_FORMAT, rows, head }
  yield `${JSON.stringify(end)}\n`
}

import type { Kysely } from 'kysely'
import type { Database } from '../store/index.js'
import { storedRow } from './chain.js'
import { headOf, readChainHead, readStoredHead, type ChainHead } from './head.js'

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
  /** null when the store had no head (an empty log, or one whose head was removed) or one that does not read as a head */
  readonly head: ChainHead | null
  /** the head's text as stored, when it does not read as a head (overwritten): never written as no head */
  readonly head_unreadable?: string
}

/**
 * Every row as stored, one JSON line each, then the end line ({@link ExportEnd}); every line ends in `\n`.
 * `summary` and `details` stay JSON text so the hashes can be recomputed from the export alone (`warrant audit
 * verify --file`); paged so memory does not grow with the log. The head is read first and rows up to it are
 * written, so rows appended meanwhile never leave the file ending past the head it states. Rows past it are written
 * too where the head has not moved since: an append writes its rows and the head in one transaction, so those rows
 * were written by no append (or the head was put back), and leaving them out made an export of a broken chain
 * verify intact.
 */
export async function* exportAuditNdjson(db: Kysely<Database>): AsyncIterable<string> {
  const stored = await readStoredHead(db)
  const head = headOf(stored)
  let after: number | null = null
  let rows = 0
  const pages = async function* (upTo: number | null) {
    for (;;) {
      let q = db.selectFrom('audit_events').selectAll().orderBy('seq').limit(EXPORT_PAGE_SIZE)
      if (after !== null) q = q.where('seq', '>', after)
      if (upTo !== null) q = q.where('seq', '<=', upTo)
      const page = await q.execute()
      for (const row of page) yield `${JSON.stringify(storedRow(row))}\n`
      rows += page.length
      if (page.length > 0) after = page[page.length - 1]!.seq
      if (page.length < EXPORT_PAGE_SIZE) return
    }
  }
  yield* pages(head?.seq ?? null)
  if (head !== null) {
    const past = await db.selectFrom('audit_events').select('seq').where('seq', '>', head.seq).limit(1).executeTakeFirst()
    // read after the row past it: had an append written that row, the head would have moved with it
    if (past && sameHead(await readChainHead(db), head)) yield* pages(null)
  }
  const end: ExportEnd = { format: EXPORT_FORMAT, rows, head, ...(stored.state === 'unreadable' ? { head_unreadable: stored.text } : {}) }
  yield `${JSON.stringify(end)}\n`
}

function sameHead(a: ChainHead | null, b: ChainHead): boolean {
  return a !== null && a.seq === b.seq && a.hash === b.hash && a.mac === b.mac
}

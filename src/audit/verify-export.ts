import { WarrantError } from '../contract/index.js'
import { createStore, type AuditEventRow, type Store } from '../store/index.js'
import { AUDIT_FIRST_SEQ, storedRow } from './chain.js'
import { EXPORT_FORMAT, type ExportEnd } from './export.js'
import { CHAIN_HEAD_KEY, headOf, parseChainHead, writeChainHead } from './head.js'
import { verifyAuditChain, type VerifyOptions, type VerifyResult } from './verify.js'

const INSERT_BATCH = 500
const TEXT_COLUMNS = ['level', 'at', 'surface', 'action', 'summary', 'prev_hash', 'hash'] as const
const NULLABLE_COLUMNS = ['principal', 'selection_id', 'plan_id', 'operation_id', 'target_id', 'details'] as const
const COLUMN_COUNT = 1 + TEXT_COLUMNS.length + NULLABLE_COLUMNS.length

export interface ExportVerifyResult {
  readonly result: VerifyResult
  /** the line of the first bad row as the file holds it, when there is one */
  readonly bad_line: string | null
}

/**
 * Verifies an export (`warrant audit export`) without the store it came from: its lines must be the rows in
 * seq order, then the end line. The rows and the head the end line states are loaded into a scratch in-memory
 * store and checked by {@link verifyAuditChain}, the store's own verification, so an export and a store detect
 * the same tampering (altered, removed, reordered, forged …). What only a file can be wrong in is checked here:
 * a line cut short or missing its end line (truncated), a line that is not a row, rows out of order.
 *
 * @throws WarrantError `invalid_request` when the input is not an export at all (empty, line 1 neither a row nor
 *   the end line): there is nothing to verify, and saying "broken" would blame a chain for a wrong file.
 */
export async function verifyAuditExport(lines: AsyncIterable<string>, origin: string, options: Omit<VerifyOptions, 'onProgress'> = {}): Promise<ExportVerifyResult> {
  const scratch = await createStore({ url: 'sqlite::memory:' })
  try {
    const migrated = await scratch.migrate()
    if (migrated.error) throw migrated.error
    return await loadAndVerify(scratch, lines, origin, options)
  } finally {
    await scratch.close()
  }
}

async function loadAndVerify(scratch: Store, lines: AsyncIterable<string>, origin: string, options: Omit<VerifyOptions, 'onProgress'>): Promise<ExportVerifyResult> {
  let n = 0
  let rows = 0
  let prevSeq: number | null = null
  let end: ExportEnd | null = null
  let unreadable: { line: number; text: string } | null = null
  let batch: AuditEventRow[] = []
  const next = () => (prevSeq ?? AUDIT_FIRST_SEQ - 1) + 1
  const bad = (seq: number, problem: 'altered' | 'removed' | 'reordered' | 'inserted', message: string, line: string | null): ExportVerifyResult => ({
    result: { ok: false, status: 'broken', first_bad_seq: seq, problem, message, rows_checked: rows, acknowledged_breaks: [] },
    bad_line: line,
  })
  const flush = async () => {
    if (batch.length > 0) await scratch.db.insertInto('audit_events').values(batch).execute()
    batch = []
  }

  for await (const text of lines) {
    n += 1
    // a line that does not parse is judged once we know whether it was the last: cut short, or edited
    if (unreadable) return bad(next(), 'altered', `line ${unreadable.line} of ${origin} is not JSON: the file was edited`, unreadable.text)
    if (end) return bad(next(), 'inserted', `line ${n} of ${origin} follows the export's end line: it was added after the export was written`, text)
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch {
      if (n === 1) throw notAnExport(origin, 'line 1 is not JSON')
      unreadable = { line: n, text }
      continue
    }
    const endLine = asEnd(value)
    if (endLine) {
      if (JSON.stringify(endLine) !== unterminated(text)) return bad(next(), 'altered', notAsWritten(n, origin), text)
      end = endLine
      continue
    }
    const row = asRow(value)
    if (!row) {
      if (n === 1) throw notAnExport(origin, "line 1 is neither an audit row nor the export's end line")
      return bad(next(), 'altered', `line ${n} of ${origin} is not an audit row as exported (the columns of audit_events, as stored): the file was edited`, text)
    }
    // What a line parses to is not all it says: a member given twice parses to its last value, and a reader keeping the
    // first (or a person searching the file) reads the other. The export writes each line one way; only that is its line.
    if (JSON.stringify(storedRow(row)) !== unterminated(text)) return bad(row.seq, 'altered', notAsWritten(n, origin), text)
    if (prevSeq !== null && row.seq <= prevSeq)
      return row.seq === prevSeq
        ? bad(row.seq, 'inserted', `line ${n} of ${origin} repeats seq ${row.seq}: the file was edited`, text)
        : bad(row.seq, 'reordered', `line ${n} of ${origin} holds seq ${row.seq} after seq ${prevSeq}: the rows are not in the order they were exported (seq order)`, text)
    prevSeq = row.seq
    rows += 1
    batch.push(row)
    if (batch.length >= INSERT_BATCH) await flush()
  }
  await flush()
  if (n === 0) throw new WarrantError('invalid_request', `${origin} is empty: not a Warrant audit export`, { file: origin })
  if (unreadable) return bad(next(), 'removed', `the last line of ${origin} (line ${unreadable.line}) is cut short: the file was truncated`, unreadable.text)
  if (!end)
    return bad(next(), 'removed', `${origin} ends after line ${n} without the export's end line (${EXPORT_FORMAT}): the file was truncated, or written by a Warrant older than the end line`, null)

  if (end.head) await writeChainHead(scratch.db, end.head)
  // a head stored but unreadable is stored as it was, so the store's verify names it as it does on the store
  if (end.head_unreadable !== undefined) await scratch.db.insertInto('kv').values({ key: CHAIN_HEAD_KEY, value: end.head_unreadable }).execute()
  const result = await verifyAuditChain(scratch.db, options)
  if (result.status !== 'broken' && result.rows !== end.rows)
    return bad(next(), result.rows < end.rows ? 'removed' : 'inserted', `${origin} holds ${result.rows} rows, but its end line says ${end.rows} were exported`, null)
  if (result.status !== 'broken') return { result, bad_line: null }
  const row = await scratch.db.selectFrom('audit_events').selectAll().where('seq', '=', result.first_bad_seq).executeTakeFirst()
  return { result, bad_line: row ? JSON.stringify(row) : null }
}

/** A line without its line end: a file read by lines has none, the export's own lines (read as they are made) do. */
function unterminated(text: string): string {
  return text.endsWith('\r\n') ? text.slice(0, -2) : text.endsWith('\n') ? text.slice(0, -1) : text
}

function notAsWritten(n: number, origin: string): string {
  return `line ${n} of ${origin} is not exactly as the export wrote it (a member given twice, members reordered, spaces added or a character escaped otherwise): the file was edited`
}

function notAnExport(origin: string, why: string): WarrantError {
  return new WarrantError('invalid_request', `${origin} is not a Warrant audit export: ${why} (write one with \`warrant audit export -o FILE\`)`, { file: origin })
}

/** The end line, when the value is one; its head as `kv` would hold it. */
function asEnd(value: unknown): ExportEnd | null {
  if (typeof value !== 'object' || value === null || (value as { format?: unknown }).format !== EXPORT_FORMAT) return null
  const { rows, head, head_unreadable } = value as { rows?: unknown; head?: unknown; head_unreadable?: unknown }
  if (!Number.isSafeInteger(rows)) return null
  const parsed = head === null ? null : headOf(parseChainHead(JSON.stringify(head)))
  if (head !== null && parsed === null) return null
  if (head_unreadable === undefined) return { format: EXPORT_FORMAT, rows: rows as number, head: parsed }
  // only beside no head, and only text that does not read as one: anything else is no end line the export writes
  if (parsed !== null || typeof head_unreadable !== 'string' || parseChainHead(head_unreadable).state !== 'unreadable') return null
  return { format: EXPORT_FORMAT, rows: rows as number, head: null, head_unreadable }
}

/** A row exactly as the export writes it: every column of audit_events, with its type, and nothing else. */
function asRow(value: unknown): AuditEventRow | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null
  const v = value as Record<string, unknown>
  if (Object.keys(v).length !== COLUMN_COUNT || !Number.isSafeInteger(v.seq)) return null
  if (!TEXT_COLUMNS.every((c) => typeof v[c] === 'string')) return null
  if (!NULLABLE_COLUMNS.every((c) => v[c] === null || typeof v[c] === 'string')) return null
  if (v.level !== 'run' && v.level !== 'call') return null
  return v as unknown as AuditEventRow
}

import { CompiledQuery } from 'kysely'
import type { AuditEventRow } from '../store/index.js'
import { AUDIT_COLUMNS } from './chain.js'

/** The INSERT text of `count` audit rows on SQLite, built once per count. */
const texts = new Map<number, string>()

/**
 * The INSERT of audit rows on a SQLite store as one compiled statement: every column in table order, the rows'
 * values bound in that order (a value left out is NULL, as the builder wrote it). Building it with kysely's
 * `values()` parsed every row's keys and values and compiled the statement anew for each batch, on the executor's
 * hot path (three rows a target); the text depends only on the row count, so the store prepares it once.
 *
 * @example await tx.executeQuery(sqliteAuditInsert(rows))
 */
export function sqliteAuditInsert(rows: readonly AuditEventRow[]): CompiledQuery {
  let text = texts.get(rows.length)
  if (text === undefined) {
    const row = `(${AUDIT_COLUMNS.map(() => '?').join(', ')})`
    text = `insert into "audit_events" (${AUDIT_COLUMNS.map((c) => `"${c}"`).join(', ')}) values ${Array.from({ length: rows.length }, () => row).join(', ')}`
    texts.set(rows.length, text)
  }
  const parameters: unknown[] = []
  for (const r of rows) for (const c of AUDIT_COLUMNS) parameters.push(r[c] ?? null)
  return CompiledQuery.raw(text, parameters)
}

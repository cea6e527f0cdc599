import type { ReadByIdsResult, SourceRecord } from '../connector.js'
import { selectRows, timed, toRecord, type ConnectorContext } from './context.js'
import { readFailure } from './errors.js'
import { idKindRefused, rowsIdRefusal } from './id-kind.js'
import type { ColumnFacts } from './column-types.js'
import { idRefusal, idsIn } from './exact-key.js'
import { mistypedFieldsOf, mistypedMessage } from './page-judge.js'
import { hasNoVersion, noVersionMessage } from './version.js'

// keeps each IN list well under every driver's parameter limit
const READ_BY_IDS_CHUNK = 500

/**
 * Reads records by id outside any session, in chunks. An id that cannot be one of the id column's type is
 * failed without a query (`idRefusal`); a chunk that fails is read again id by id, so one id the engine cannot
 * read fails no other; an id whose read fails is failed, not missing, since it may exist. A record
 * holding a value of another type than declared is failed too, naming the field (see `createPageJudge`), and so
 * is one whose version column is NULL or ''.
 */
export async function readByIds(ctx: ConnectorContext, ids: readonly string[], signal?: AbortSignal): Promise<ReadByIdsResult> {
  const { idField, idType, endpoint } = ctx
  const unique = [...new Set(ids)]
  const records = new Map<string, SourceRecord>()
  const failed: { id: string; message: string; idRefused?: true }[] = []
  const mistyped = mistypedFieldsOf(ctx)
  const catalogue = unique.length === 0 ? null : await ctx.catalogue.recent()
  const columns = catalogue?.columns ?? null
  // an id the column's type cannot hold is not sent (PostgreSQL would fail the batch on it): failed, saying why,
  // never missing, since only the type rules it out
  // ids the column cannot hold to the digit (or at all: bytes) are not read at all, said by the column's own
  // refusal first, with its fix: a row found by one would not be that id's
  const table = catalogue?.table ?? null
  const refusal = table?.idRefusal ?? null
  const queryable: string[] = []
  for (const id of unique) {
    const why = refusal === null ? idRefusal(ctx, id, columns) : null
    if (refusal !== null) failed.push({ id, message: refusal })
    else if (why === null) queryable.push(id)
    else failed.push({ id, message: `${endpoint} by id: ${why}`, idRefused: true })
  }
  const chunks: string[][] = []
  for (let start = 0; start < queryable.length; start += READ_BY_IDS_CHUNK) chunks.push(queryable.slice(start, start + READ_BY_IDS_CHUNK))
  for (const chunk of chunks) {
    if (ctx.isClosing() || signal?.aborted) {
      const message = ctx.isClosing() ? 'the connector is closed' : 'the read was aborted'
      for (const id of chunk) failed.push({ id, message })
      continue
    }
    const result = await timed(() => ctx.backend.run(byIds(ctx, chunk, columns)))
    if ('error' in result) {
      ctx.emit({ method: 'SELECT', outcome: 'error', durationMs: result.durationMs })
      // one id the engine could not read (past a type's range) fails the statement: each id then alone, so it
      // fails no other
      if (chunk.length > 1) {
        chunks.push(...chunk.map((id) => [id]))
        continue
      }
      const message = readFailure(`${endpoint} by id`, result.error)
      for (const id of chunk) failed.push({ id, message })
      continue
    }
    ctx.emit({ method: 'SELECT', outcome: 'ok', durationMs: result.durationMs, ...(chunk.length === 1 ? { targetId: chunk[0] } : {}) })
    const asked = new Set(chunk)
    const strays: string[] = []
    // a row whose id is no id (an object the driver made of it, whatever the column's type name) names no record,
    // and which asked id matched it only the engine knows: each id no row answered is failed, saying why
    const wrongKind = rowsIdRefusal(result.value, endpoint, idField, `the rows read for ${chunk.length === 1 ? 'it' : `${chunk.length} ids`}`)
    const shown = result.value.filter((row) => idKindRefused(row[idField]) === null).map((row) => toRecord(ctx, row))
    // two rows a record shows under one id (a SQLite column of no type keeps the integer 1 beside the text '1'):
    // neither is that record, and the id is not proven absent
    const rowsOf = new Map<string, number>()
    for (const record of shown) rowsOf.set(record.id, (rowsOf.get(record.id) ?? 0) + 1)
    for (const [id, count] of rowsOf) if (count > 1 && asked.has(id)) failed.push({ id, message: sharedId(ctx, id, count) })
    for (const record of shown) {
      if ((rowsOf.get(record.id) ?? 0) > 1 && asked.has(record.id)) continue
      // the engine's equality is not always JavaScript's ('A' = 'a' under a case-insensitive collation)
      if (!asked.has(record.id)) {
        strays.push(record.id)
        continue
      }
      // a record holding a value of another type than declared cannot be judged by a precondition: failed, saying so
      const wrong = mistyped(record)
      if (wrong !== null) failed.push({ id: record.id, message: mistypedMessage(`${endpoint} by id`, record, wrong, ctx.fields) })
      // nor, without a version, could a write to it be conditional: failed, never read at version ""
      else if (hasNoVersion(record)) failed.push({ id: record.id, message: `${endpoint} by id: ${noVersionMessage(ctx, record.id)}` })
      else records.set(record.id, record)
    }
    // An id the engine matched to a row stored otherwise is neither that record nor proven absent (a write to it
    // would change the stored row). Which asked id matched which row only the engine knows. Rows each shown under
    // an asked id may have matched another asked id too ("abc" beside "ABC" under a case-insensitive collation,
    // "x" beside "x " under PAD SPACE): the ids left without a row are asked again together, and only where that
    // finds rows (rare), one by one.
    const answered = new Set(failed.map((f) => f.id))
    const left = chunk.filter((id) => !records.has(id) && !answered.has(id))
    if (wrongKind !== null) {
      for (const id of left) failed.push({ id, message: `${endpoint} by id: ${wrongKind}` })
      continue
    }
    if (left.length === 0 || result.value.length === 0) continue
    if (strays.length === 0) {
      const again = await timed(() => ctx.backend.run(byIds(ctx, left, columns)))
      // every statement is a call, the re-reads too: the audit log holds each one the upstream ran
      ctx.emit({ method: 'SELECT', outcome: 'error' in again ? 'error' : 'ok', durationMs: again.durationMs, ...(left.length === 1 ? { targetId: left[0] } : {}) })
      if ('error' in again) {
        for (const id of left) failed.push({ id, message: readFailure(`${endpoint} by id`, again.error) })
        continue
      }
      if (again.value.length === 0) continue
    }
    for (const id of left) {
      const alone = await timed(() => ctx.backend.run(byIds(ctx, [id], columns)))
      ctx.emit({ method: 'SELECT', targetId: id, outcome: 'error' in alone ? 'error' : 'ok', durationMs: alone.durationMs })
      if ('error' in alone) failed.push({ id, message: readFailure(`${endpoint} by id`, alone.error) })
      else if (alone.value.length > 0) {
        const kind = rowsIdRefusal(alone.value, endpoint, idField, 'the rows read for it')
        failed.push(kind === null ? { id, message: spelledOtherwise(ctx, id, alone.value.map((row) => toRecord(ctx, row).id)), idRefused: true } : { id, message: `${endpoint} by id: ${kind}` })
      }
    }
  }
  // a row a policy hides is not found, and not proven absent either
  const hidden = table?.hiddenRows ?? null
  if (hidden !== null) for (const id of queryable) if (!records.has(id) && !failed.some((f) => f.id === id)) failed.push({ id, message: hidden })
  const failedIds = new Set(failed.map((f) => f.id))
  return { records, missing: unique.filter((id) => !records.has(id) && !failedIds.has(id)), failed }
}

function byIds(ctx: ConnectorContext, ids: readonly string[], columns: ColumnFacts | null) {
  return selectRows(ctx).where(idsIn(ctx, ids, columns)).compile()
}

/** Why an id that several rows show names no one record. */
function sharedId(ctx: ConnectorContext, id: string, count: number): string {
  return `${count} rows of ${ctx.endpoint} show ${ctx.idField} "${id}" (a SQLite column of no declared type, or BLOB, keeps the integer 1, the real 1.0 and the text '1' as different values, all shown as "1"): the id names no one record, and none is proven absent; give the column a type (INTEGER or TEXT) and store one form of each id`
}

/** Why an id the engine matched to a row stored under another spelling names no record here. */
export function spelledOtherwise(ctx: ConnectorContext, id: string, stored: readonly string[]): string {
  const rows = stored.map((s) => `"${s}"`).join(', ')
  return `id "${id}" of ${ctx.endpoint} matches the row stored as ${rows}: the database's comparison of column "${ctx.idField}" is not JavaScript's (a collation ignoring case or trailing spaces, a uuid read in capitals, digits read as a number), so "${id}" names no record here and is not proven absent either; use the id as the table stores it`
}

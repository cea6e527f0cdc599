import { sql, type CompiledQuery, type RawBuilder, type SqlBool } from 'kysely'
import { matchesFilter, WarrantError } from '../../contract/index.js'
import type { FieldType } from '../../config/index.js'
import type { SourceRecord, WriteOutcome, WriteRequest } from '../connector.js'
import { filterMisfit } from './field-misfits.js'
import { numberMisfitMessage, restoresHeld, setMisfit, setMisfitMessage, setNumberMisfit, setStringMisfit, stringMisfitMessage } from '../set-misfit.js'
import { compileFilter, fieldTypeOf, isValueOfType } from './compile.js'
import type { ConditionalUpdate, Row } from './backend.js'
import type { CatalogueFacts } from './catalogue-facts.js'
import { selectRows, timed, toRecord, type ConnectorContext } from './context.js'
import { rowsIdRefusal } from './id-kind.js'
import { classifyWriteError, messageOf } from './errors.js'
import { idMatch, idRefusal, idsIn, versionMatch } from './exact-key.js'
import { spelledOtherwise } from './read-by-ids.js'
import { mayTouchOutsideSet, unapprovedChange } from './untouched-fields.js'
import { hasNoVersion, nextVersion, noVersionMessage, sameVersion, versionParam } from './version.js'

/**
 * One conditional `UPDATE … WHERE id AND version AND precondition RETURNING …` (on MySQL the UPDATE and a read
 * of the row in one transaction): the check and the write are a single statement, so nothing can change the
 * row between them. Where a trigger may change the row after the statement, SQLite and PostgreSQL do the same
 * (the UPDATE, the row read back, COMMIT): the answer is the row as the table holds it, never RETURNING's
 * earlier picture. Where a generated column may move outside the set, the UPDATE is judged before COMMIT too. A version column the catalogue shows cannot move on every write refuses every write. A statement that fails is classified by
 * whether it could have been applied; one that matches no row is explained by reading the row back.
 */
export async function writeRecord(ctx: ConnectorContext, request: WriteRequest): Promise<WriteOutcome> {
  const { idField, endpoint } = ctx
  const { assignments, catalogue, precondition } = await prepareWrite(ctx, request)
  const facts = catalogue.columns
  const targetId = request.id
  if (ctx.isClosing()) return { kind: 'rejected', status: 503, message: `the connector for ${endpoint} is closed; nothing was written` }
  const unbound = idRefusal(ctx, request.id, facts)
  if (unbound !== null) return { kind: 'rejected', status: 422, message: `nothing was written: ${unbound}` }
  if (facts?.versionProblem) return { kind: 'rejected', status: 500, message: `${facts.versionProblem}; nothing was written` }
  // no version ("", as frozen from a row without one) or none the column could hold: no UPDATE could be made
  // conditional on it; the row says why (it has no version itself, or another one), nothing is sent
  const expected = request.expectedVersion === '' ? undefined : versionParam(ctx, request.expectedVersion)
  if (expected === undefined) return explainNoRow(ctx, request, false)

  const now = ctx.clock()
  const set = updateSet(ctx, assignments, request.set, nextVersion(ctx, request.expectedVersion, now), now)
  const conditions = [idMatch(ctx, targetId, facts), versionMatch(ctx, expected, facts)]
  if (precondition) conditions.push(precondition)
  // the rows of exactly this id, as the UPDATE matched them: "A" beside "a" under a case-insensitive key is another record
  const readBack = () => selectRows(ctx).where(idMatch(ctx, targetId, facts)).compile()
  const result = await timed(() =>
    ctx.backend.update(
      conditionalUpdate(ctx, set, conditions, readBack, {
        returningIsFinal: finalReturning(catalogue, idField),
        judgedBeforeCommit: mayTouchOutsideSet(ctx, request, facts?.generatedFields),
        rereadOf: readBack,
        accept: (rows) => refusal(ctx, request, rows),
      }),
    ),
  )
  if ('error' in result) {
    const failure = classifyWriteError(result.error)
    ctx.emit({ method: 'UPDATE', targetId, outcome: failure.kind, durationMs: result.durationMs })
    return failure
  }
  const rows = result.value
  if (rows.length === 1) {
    // committed on its own (RETURNING), to a row whose id is no id (an object): made, but to no record it can name
    const kind = rowsIdRefusal(rows, ctx.endpoint, ctx.idField, `the row the UPDATE of "${request.id}" matched`)
    if (kind !== null) {
      ctx.emit({ method: 'UPDATE', targetId, outcome: 'unknown', durationMs: result.durationMs })
      return { kind: 'unknown', message: `the statement committed, so a row was written, but ${kind}` }
    }
    const record = toRecord(ctx, rows[0]!)
    // the engine matched a row stored under another id (an integer id over text digits): committed on its own,
    // that row was written, never the target
    if (record.id !== request.id) {
      ctx.emit({ method: 'UPDATE', targetId, outcome: 'written', durationMs: result.durationMs })
      return { kind: 'written', status: 200, record: null, otherRecordId: record.id }
    }
    // only where nothing could refuse it before COMMIT (RETURNING autocommitted): written, but not safely
    if (sameVersion(ctx, record.version, request.expectedVersion)) {
      ctx.emit({ method: 'UPDATE', targetId, outcome: 'unknown', durationMs: result.durationMs })
      return { kind: 'unknown', message: `${unmovedVersion(ctx, request.id, record.version)}; the statement committed, so the write was made, and a writer still holding that version could overwrite it unseen` }
    }
    ctx.emit({ method: 'UPDATE', targetId, outcome: 'written', durationMs: result.durationMs })
    return { kind: 'written', status: 200, record }
  }
  if (rows.length > 1) {
    ctx.emit({ method: 'UPDATE', targetId, outcome: 'unknown', durationMs: result.durationMs })
    return { kind: 'unknown', message: `${rows.length} rows of ${endpoint} have ${idField} "${request.id}": the id is not unique and every one of them was written` }
  }
  ctx.emit({ method: 'UPDATE', targetId, outcome: 'conflict', durationMs: result.durationMs })
  return explainNoRow(ctx, request)
}

/**
 * Whether an UPDATE … RETURNING may commit on its own, its rows the answer: nothing changes a row after it (no
 * UPDATE trigger, rule or view), and the id is proven unique. An id no key proves unique may be shared by a row
 * inserted since the selection froze (the walk refuses only repeats it saw); committed alone, the statement
 * would write that row too, which no reviewer approved. So may an id over a column that compares otherwise (an
 * integer id over text: "01" is sent as 1, which finds the row "1"), whose match `idMatch` cannot make exact.
 * Else the rows are read back before COMMIT (`refusal`).
 */
export function finalReturning(catalogue: CatalogueFacts, idField: string): boolean {
  const { columns } = catalogue
  return columns !== null && !columns.changedAfterUpdate && catalogue.table?.idUnique === true && !columns.misfits.some((m) => m.field === idField)
}

/**
 * What a write of `request` needs before anything is sent, the same for one record and for a window: its
 * assignments encoded, the catalogue's facts, and its precondition compiled as the record shows its values
 * (see compileFilter). The facts are read first, within their max age (a trigger added since is seen within it);
 * null (unreadable) leaves every write on the transaction that reads it back.
 */
export async function prepareWrite(
  ctx: ConnectorContext,
  request: WriteRequest,
): Promise<{ readonly assignments: Record<string, unknown>; readonly catalogue: CatalogueFacts; readonly precondition: RawBuilder<SqlBool> | null }> {
  const assignments = encodeSet(ctx, request.set, request.restores)
  const catalogue = await ctx.catalogue.recent()
  const facts = catalogue.columns
  // a precondition on a field its column compares otherwise (a string over a DATETIME) could hold where the plan
  // said it fails, or the reverse: refused before anything is sent, as a filter on it is
  const misfit = filterMisfit(Object.keys(request.precondition), facts?.misfits ?? null, 'precondition')
  if (misfit !== null) throw new WarrantError('invalid_request', misfit)
  // so may a value set into such a column: the proposal refused it, but the column may have been retyped since. A
  // value put back as the record held it (a compensation's before-value, `request.restores`) is not judged so: the
  // column held it. The proposal judged it with the same functions and the same `restores` (src/plans/proposals.ts).
  const unfit = setMisfit(request.set, facts?.misfits ?? null, request.restores)
  if (unfit !== null) throw new WarrantError('invalid_request', `the write ${setMisfitMessage(unfit)}, so nothing was written`, { field: unfit.misfit.field, value_type: unfit.valueType, column_type: unfit.misfit.column })
  // and a string its column keeps otherwise than written ("abc" or "042" into an integer column)
  const unkept = setStringMisfit(request.set, facts?.stringColumns ?? null, request.restores)
  if (unkept !== null) throw new WarrantError('invalid_request', `the write ${stringMisfitMessage(unkept)}, so nothing was written`, { field: unkept.column.field, value: unkept.value, column_type: unkept.column.column })
  // and a number its column would round or refuse (12.345 into numeric(12,2), 12.5 into an integer column)
  const unheld = setNumberMisfit(request.set, facts?.numberColumns ?? null)
  if (unheld !== null) throw new WarrantError('invalid_request', `the write ${numberMisfitMessage(unheld)}, so nothing was written`, { field: unheld.column.field, value: unheld.value, column_type: unheld.column.column })
  const precondition = compileFilter(request.precondition, ctx.fields, ctx.dialect, 'precondition', {
    comparedAsText: facts?.comparedAsText,
    comparedByCodePoint: facts?.comparedByCodePoint,
    zeroDates: facts?.zeroDates,
    comparedAsShown: facts?.comparedAsShown,
    narrowText: facts?.narrowText,
    // every SQLite column holds any value; on the server engines, those `looseFieldsOf` names
    heldOnlyWhenJudged: ctx.dialect === 'sqlite' ? new Set(Object.keys(request.precondition)) : facts?.looseValues,
  })
  return { assignments, catalogue, precondition }
}

/**
 * What an UPDATE sets: the assignments, the next version, and `updated_at` where the resource keeps it apart from
 * its version and the write does not set it itself (MySQL takes it as a date: it does not read an ISO string's `Z`).
 */
export function updateSet(ctx: ConnectorContext, assignments: Record<string, unknown>, requestSet: WriteRequest['set'], version: unknown, now: Date): Record<string, unknown> {
  const set: Record<string, unknown> = { ...assignments }
  set[ctx.versionField] = version
  if (ctx.fields.updated_at === 'timestamp' && ctx.versionField !== 'updated_at' && !('updated_at' in requestSet)) set.updated_at = ctx.dialect === 'mysql' ? now : now.toISOString()
  return set
}

/**
 * `UPDATE … SET set WHERE every one of conditions`, as the backend runs it. Each statement is compiled only by
 * the engine that runs it (RETURNING on SQLite and PostgreSQL, the plain UPDATE and `readBack` on MySQL).
 */
export function conditionalUpdate(
  ctx: ConnectorContext,
  set: Record<string, unknown>,
  conditions: readonly RawBuilder<unknown>[],
  readBack: () => CompiledQuery,
  rest: Pick<ConditionalUpdate, 'returningIsFinal' | 'judgedBeforeCommit' | 'rereadOf' | 'accept'>,
): ConditionalUpdate {
  const update = ctx.backend.db
    .updateTable(ctx.table)
    .set(set)
    .where(sql<SqlBool>`${sql.join(conditions, sql` and `)}`)
  return {
    get returning() {
      return update.returning([...ctx.columns]).compile()
    },
    get plain() {
      return update.compile()
    },
    get readBack() {
      return readBack()
    },
    ...rest,
  }
}

/**
 * Rows an engine that can still roll back should not commit: more than one row for the id, or a version that
 * did not move (a column too coarse for the next version, e.g. DATETIME without fractions): committed, that
 * write would be invisible to every later version check.
 */
function refusal(ctx: ConnectorContext, request: WriteRequest, rows: readonly Row[]): string | undefined {
  // read back in the UPDATE's transaction: a trigger removed the row it had just written
  if (rows.length === 0) return `record "${request.id}" was gone when read back after the UPDATE (a trigger removed it or changed its ${ctx.idField})`
  if (rows.length !== 1) return `${rows.length} rows of ${ctx.endpoint} have ${ctx.idField} "${request.id}": the id is not unique`
  // an id the driver gives as an object (whatever the column's type name) is no record's: never this one
  const kind = rowsIdRefusal(rows, ctx.endpoint, ctx.idField, `the row the UPDATE of "${request.id}" matched`)
  if (kind !== null) return kind
  const record = toRecord(ctx, rows[0]!)
  if (record.id !== request.id) return spelledOtherwise(ctx, request.id, [record.id])
  if (sameVersion(ctx, record.version, request.expectedVersion)) return unmovedVersion(ctx, request.id, record.version)
  // a set field kept otherwise, or a field outside the set that moved: one rule for every engine (untouched-fields.ts)
  return unapprovedChange(ctx, request, record)
}

/** A write after which the version is the expected one: the column rounded the next version back, or a trigger put it back. */
export function unmovedVersion(ctx: ConnectorContext, id: string, version: string): string {
  return `the version column "${ctx.versionField}" of record "${id}" did not change (still ${version}): it cannot hold the next version, or a trigger put it back`
}

/**
 * After an UPDATE that matched nothing, or none sent (`usable` false: no expected version it could be made
 * conditional on): read the row to say why. The write did not happen either way.
 */
async function explainNoRow(ctx: ConnectorContext, request: WriteRequest, usable = true): Promise<WriteOutcome> {
  const catalogue = await ctx.catalogue.recent()
  const compiled = selectRows(ctx).where(idsIn(ctx, [request.id], catalogue.columns)).compile()
  const result = await timed(() => ctx.backend.run(compiled))
  if ('error' in result) {
    ctx.emit({ method: 'SELECT', targetId: request.id, outcome: 'error', durationMs: result.durationMs })
    return {
      kind: 'conflict',
      reason: 'precondition_failed',
      message: `nothing was written: the record did not match its id, version and precondition (reading it back failed: ${messageOf(result.error)})`,
    }
  }
  ctx.emit({ method: 'SELECT', targetId: request.id, outcome: 'ok', durationMs: result.durationMs })
  const records = result.value.map((row) => toRecord(ctx, row))
  const record = records.find((r) => r.id === request.id)
  // a row the engine's `=` finds under another spelling is not the target, nor proof that it is absent
  if (!record && records.length > 0) return { kind: 'conflict', reason: 'missing', message: `nothing was written: ${spelledOtherwise(ctx, request.id, records.map((r) => r.id))}` }
  if (!record) return notFound(ctx, request.id, catalogue)
  return unmatchedOutcome(ctx, request, record, usable, keptFromUpdate(ctx, catalogue))
}

/**
 * What the catalogue shows may keep an UPDATE from a row it names without an error, said as why; null where nothing
 * could. Row-level security that binds the role (a policy may keep from an UPDATE a row a SELECT shows); an UPDATE
 * trigger or rule, or a view (a BEFORE UPDATE trigger returning NULL, SQLite's RAISE(IGNORE), DO INSTEAD NOTHING).
 */
export function keptFromUpdate(ctx: ConnectorContext, catalogue: CatalogueFacts): KeptFromUpdate | null {
  const hidden = catalogue.table?.hiddenRows ?? null
  if (hidden !== null) return { status: 403, why: `a row-level security policy may have kept it from the UPDATE: ${hidden}` }
  if (catalogue.columns?.changedAfterUpdate !== true) return null
  return { status: 409, why: `an UPDATE trigger or rule of ${ctx.endpoint} may have skipped it without an error (a BEFORE UPDATE trigger returning NULL, SQLite's RAISE(IGNORE), a rule DO INSTEAD NOTHING, a view's INSTEAD OF trigger): have it refuse such a write with an error, or let it through` }
}

/** Why an UPDATE may have been kept from a row, and the status a write so refused answers (403 for a policy). */
export interface KeptFromUpdate {
  readonly status: number
  readonly why: string
}

/**
 * A target whose row neither the UPDATE nor the read after it found: missing, unless row-level security binds the
 * role (`TableFacts.hiddenRows`): a policy hides rows from an UPDATE as from a SELECT, so the row may be there,
 * and "no longer exists" would be a guess. Nothing was written either way.
 */
export function notFound(ctx: ConnectorContext, id: string, catalogue: CatalogueFacts): WriteOutcome {
  const hidden = catalogue.table?.hiddenRows ?? null
  if (hidden !== null) return { kind: 'rejected', status: 403, message: `nothing was written: record "${id}" was not found, which does not prove it absent: ${hidden}` }
  return { kind: 'conflict', reason: 'missing', message: `${ctx.endpoint} has no record with ${ctx.idField} "${id}"` }
}

/**
 * Why a conditional UPDATE did not match a row that exists. A row without a version (NULL or '') matches no
 * `version = ?`, whatever was expected: refused as such, never "version changed" or "no longer meets the
 * precondition" about a record nobody changed. Nor where something may keep an UPDATE from the row (`kept`, see
 * `keptFromUpdate`) and the row read is at the version and meets the precondition: refused naming it.
 */
export function unmatchedOutcome(ctx: ConnectorContext, request: WriteRequest, record: SourceRecord, usable = true, kept: KeptFromUpdate | null = null): WriteOutcome {
  if (hasNoVersion(record)) return { kind: 'rejected', status: 409, message: `${noVersionMessage(ctx, request.id)}; nothing was written` }
  const expected = request.expectedVersion === '' ? 'no version' : `version ${request.expectedVersion}${usable ? '' : `, which is no ${ctx.versionType} version`}`
  // the very version the record shows, which no UPDATE can name (an integer at or past 2^63 - 1: version + 1 does
  // not fit in 64 bits): refused as such, never "at version X, not the expected version X"
  if (!usable && ctx.versionType === 'integer' && record.version === request.expectedVersion) {
    return { kind: 'rejected', status: 409, message: `nothing was written: record "${request.id}" is at version ${record.version}, which no write can be made conditional on and advance (an integer version must stay below 2^63 - 1, so that version + 1 fits in 64 bits)` }
  }
  if (!usable || !sameVersion(ctx, record.version, request.expectedVersion)) {
    return { kind: 'conflict', reason: 'version_changed', message: `record "${request.id}" is at version ${record.version}, not the expected ${expected}` }
  }
  if (kept !== null && matchesFilter(record.fields, request.precondition, ctx.fields)) {
    return { kind: 'rejected', status: kept.status, message: `nothing was written: record "${request.id}" is at the expected ${expected} and meets the precondition, so ${kept.why}` }
  }
  return { kind: 'conflict', reason: 'precondition_failed', message: `record "${request.id}" no longer meets the action's precondition` }
}

/**
 * `set` as column values: declared, writable fields only, each of its type; tags as JSON text. A scalar `restores`
 * puts back as the record held it (`restoresHeld`) goes as it was read, of whatever type: the engine takes it or
 * refuses it, and the answer is judged as any write's (never converted here to the declared type).
 */
export function encodeSet(ctx: ConnectorContext, values: Readonly<Record<string, unknown>>, restores?: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  const entries = Object.entries(values)
  if (entries.length === 0) throw new WarrantError('invalid_request', 'a write sets at least one field')
  for (const [field, value] of entries) {
    const type = fieldTypeOf(ctx.fields, field, 'the write')
    if (field === ctx.idField || field === ctx.versionField) {
      throw new WarrantError('invalid_request', `a write cannot set "${field}": the connector owns the id and the version`, { field })
    }
    if (value === null) {
      out[field] = null
    } else if (!isValueOfType(type, value) && restoresHeld(field, value, restores)) {
      out[field] = typeof value === 'boolean' && ctx.dialect === 'sqlite' ? (value ? 1 : 0) : value
    } else if (type === 'tags') {
      if (!Array.isArray(value) || !value.every((t) => typeof t === 'string')) throw setMismatch(field, type, 'an array of strings')
      out[field] = JSON.stringify(value)
    } else {
      if (!isValueOfType(type, value)) throw setMismatch(field, type, type === 'integer' ? 'an integer' : `a ${type === 'timestamp' ? 'string' : type}`)
      if (type === 'timestamp' && ctx.dialect !== 'sqlite') {
        // MySQL gets a DATETIME literal in UTC (it does not read the ISO string's Z); PostgreSQL the instant in UTC,
        // as toISOString spells it: a column without a zone drops an offset, and kept 02:00 for 02:00+02:00
        const at = Date.parse(value as string)
        if (Number.isNaN(at)) throw setMismatch(field, type, 'an ISO-8601 timestamp string')
        out[field] = ctx.dialect === 'mysql' ? new Date(at) : new Date(at).toISOString()
      } else {
        out[field] = typeof value === 'boolean' && ctx.dialect === 'sqlite' ? (value ? 1 : 0) : value
      }
    }
  }
  return out
}

function setMismatch(field: string, type: FieldType, expected: string): WarrantError {
  return new WarrantError('invalid_request', `the write sets "${field}", a ${type} field, to a value that is not ${expected}`, { field })
}

import { randomUUID } from 'node:crypto'
import { sql, type SqlBool } from 'kysely'
import { canonicalJson, surelySameJson, WarrantError } from '../../contract/index.js'
import type { SourceRecord, WriteOutcome, WriteRequest, WriteThrew } from '../connector.js'
import type { Row } from './backend.js'
import { selectRows, timed, toRecord, type ConnectorContext } from './context.js'
import { rowsIdRefusal } from './id-kind.js'
import { classifyWriteError, messageOf } from './errors.js'
import { idMatch, idRefusal, idsIn, versionMatch } from './exact-key.js'
import { windowKeysMatch } from './key-arrays.js'
import { spelledOtherwise } from './read-by-ids.js'
import { idParam } from './resource.js'
import { mayTouchOutsideSet, unapprovedChange } from './untouched-fields.js'
import { sameVersion, versionParam } from './version.js'
import { conditionalUpdate, finalReturning, keptFromUpdate, notFound, prepareWrite, unmatchedOutcome, unmovedVersion, updateSet, writeRecord } from './write.js'

/**
 * A window of conditional writes as one statement (SQLite, PostgreSQL):
 * `UPDATE … SET … WHERE ((id = ? AND version = ?) OR …) AND precondition RETURNING …`. Each record is written
 * only at its own expected version and only if it meets the precondition, exactly as `writeRecord` would
 * write it alone; the statement is atomic, so either it applied to every row it matched or to none.
 *
 * Each request's outcome is the one `writeRecord` would have given it:
 * - a row returned for its id: `written`, with the record as it is now (two rows: the id is not unique, both
 *   were written: `unknown`, as alone);
 * - no row: one read of every such id says why (missing, no version, version changed, precondition failed);
 * - the statement refused (a constraint one row breaks): nothing was written, so each request is written
 *   alone, and each gets its own answer; a lock it never got (rate_limited): every request is retried;
 * - the statement failed without an answer: every request is `unknown`; no connection to send it on: every
 *   request is `not_sent`; its transaction lost before COMMIT: every request is `rolled_back`.
 *
 * Where the catalogue shows something that may change a row after the statement (an UPDATE trigger or rule, a
 * view: `ConditionalUpdate.returningIsFinal`), the statement and a read of the rows it wrote are one
 * transaction, and the answer is the rows as read; a version that did not move rolls the window back, and so does
 * a set field the row does not hold as approved or a field outside the set that moved (`unapprovedChange`; also
 * where only a generated column may move one: `judgedBeforeCommit`).
 *
 * Written alone, after the statement and in window order: a record named twice in the window (each request
 * must see what the one before it left), and one whose next version cannot be shared (a timestamp version not
 * older than now). Property-tested against writing each alone (test/connectors/sql/write-window.test.ts).
 */
export async function writeWindow(ctx: ConnectorContext, requests: readonly WriteRequest[]): Promise<(WriteOutcome | WriteThrew)[]> {
  if (requests.length === 0) return []
  const first = requests[0]!
  const key = uniformKey(first)
  for (const request of requests)
    if (!(surelySameJson(request.set, first.set) && surelySameJson(request.precondition, first.precondition) && surelySameJson(request.restores ?? null, first.restores ?? null)) && uniformKey(request) !== key) throw new WarrantError('invalid_request', 'a window of writes must set the same values under the same precondition; write these targets one at a time')
  // validated once for the window: the same set, precondition and restored values for every request
  const { assignments, catalogue, precondition } = await prepareWrite(ctx, first)
  const facts = catalogue.columns
  const outcomes: (WriteOutcome | WriteThrew | undefined)[] = new Array(requests.length)
  if (ctx.isClosing()) return requests.map(() => ({ kind: 'rejected', status: 503, message: `the connector for ${ctx.endpoint} is closed; nothing was written` }))
  if (facts?.versionProblem) return requests.map(() => ({ kind: 'rejected', status: 500, message: `${facts.versionProblem}; nothing was written` }))

  const now = ctx.clock()
  const alone: number[] = []
  const batch: { index: number; key: string; expected: string | number }[] = []
  // the same record under two spellings ("1" and "01" of an integer id) is one key: both go alone
  const keyOf = (id: string) => String(idParam(ctx.idType, id) ?? id)
  requests.forEach((request, index) => {
    const unbound = idRefusal(ctx, request.id, facts)
    if (unbound !== null) {
      outcomes[index] = { kind: 'rejected', status: 422, message: `nothing was written: ${unbound}` }
      return
    }
    const expected = request.expectedVersion === '' ? undefined : versionParam(ctx, request.expectedVersion)
    // no version the statement could be made conditional on: alone, the row says why (see `writeRecord`); a
    // timestamp version moves to now, so a record already at now or later needs a version of its own; an integer
    // past 2^53 (a bigint) goes alone too, bound as `writeRecord` binds it
    if (expected === undefined || typeof expected === 'bigint' || (ctx.versionType === 'timestamp' && !(Date.parse(request.expectedVersion) < now.getTime()))) {
      alone.push(index)
      return
    }
    batch.push({ index, key: keyOf(request.id), expected })
  })
  // the same record twice in one window: every request for it goes alone, in window order (the statement
  // would apply them out of order, and a later request could then match the version an earlier one wrote)
  const times = new Map<string, number>()
  for (const key of [...alone.map((i) => keyOf(requests[i]!.id)), ...batch.map((b) => b.key)]) times.set(key, (times.get(key) ?? 0) + 1)
  for (const entry of batch.filter((b) => times.get(b.key)! > 1)) {
    batch.splice(batch.indexOf(entry), 1)
    alone.push(entry.index)
  }

  if (batch.length > 0) {
    const set = updateSet(ctx, assignments, first.set, sharedNextVersion(ctx, now), now)
    // one condition of the same text for any window where the column's `=` allows (key-arrays.ts), else a piece per target
    const keys = windowKeysMatch(ctx, facts, batch.map((b) => ({ id: requests[b.index]!.id, expected: b.expected })))
    const pieces = () => batch.map((b) => sql<SqlBool>`(${idMatch(ctx, requests[b.index]!.id, facts)} and ${versionMatch(ctx, b.expected, facts)})`)
    const conditions = [keys ?? sql<SqlBool>`(${sql.join(pieces(), sql` or `)})`]
    if (precondition) conditions.push(precondition)
    // rows are told apart by the id as a record shows it: a row read back as "7" answers a request for "7", never
    // one for "007" that the engine also matched (an integer id's digits)
    const expectedOf = new Map(batch.map((b) => [requests[b.index]!.id, requests[b.index]!]))
    let written: readonly string[] = []
    const readBack = () => selectRows(ctx).where(idsIn(ctx, batch.map((b) => requests[b.index]!.id), facts)).compile()
    const result = await timed(() =>
      // a window is written on SQLite and PostgreSQL: RETURNING
      ctx.backend.update(conditionalUpdate(ctx, set, conditions, readBack, {
        returningIsFinal: finalReturning(catalogue, ctx.idField),
        judgedBeforeCommit: batch.some((b) => mayTouchOutsideSet(ctx, requests[b.index]!, facts?.generatedFields)),
        // the rows the UPDATE wrote, as its triggers left them (not every id of the window: some were not written)
        rereadOf: (returned) => {
          written = returned.map((row) => toRecord(ctx, row).id)
          return selectRows(ctx)
            .where(sql<SqlBool>`${sql.ref(ctx.idField)} in (${sql.join(returned.map((row) => row[ctx.idField]))})`)
            .compile()
        },
        // a row gone, an id held by two rows, or a version that did not move: the whole window is rolled back,
        // each record then written alone (which refuses the repeated id in its turn)
        accept: (rows) => {
          const kind = rowsIdRefusal(rows, ctx.endpoint, ctx.idField, "the rows the window's UPDATE matched")
          if (kind !== null) return kind
          const ids = rows.map((row) => toRecord(ctx, row).id)
          const repeated = ids.find((id, i) => ids.indexOf(id) !== i)
          if (repeated !== undefined) return `more than one row of ${ctx.endpoint} has ${ctx.idField} "${repeated}": the id is not unique`
          const reread = new Set(ids)
          const gone = written.filter((id) => !reread.has(id))
          if (gone.length > 0) return `record(s) ${gone.map((id) => `"${id}"`).join(', ')} were gone when read back after the UPDATE (a trigger removed them or changed their ${ctx.idField})`
          const records = rows.map((row) => toRecord(ctx, row))
          const unmoved = records.filter((r) => {
            const request = expectedOf.get(r.id)
            return request !== undefined && sameVersion(ctx, r.version, request.expectedVersion)
          })
          if (unmoved.length > 0) return unmoved.map((r) => unmovedVersion(ctx, r.id, r.version)).join('; ')
          // a set field kept otherwise or a field outside it moved (untouched-fields.ts): each alone then refuses exactly those
          const touched = records.flatMap((r) => {
            const request = expectedOf.get(r.id)
            return request === undefined ? [] : (unapprovedChange(ctx, request, r) ?? [])
          })
          return touched.length === 0 ? undefined : touched.join('; ')
        },
      })),
    )
    if ('error' in result) {
      const failure = classifyWriteError(result.error)
      // no answer, no connection to send it on, or a lock not obtained: each alone would fare the same (and on
      // SQLite each would wait out the busy timeout again, one after another)
      if (failure.kind === 'unknown' || failure.kind === 'not_sent' || failure.kind === 'rolled_back' || failure.kind === 'rate_limited') {
        for (const b of batch) {
          ctx.emit({ method: 'UPDATE', targetId: requests[b.index]!.id, outcome: failure.kind, durationMs: result.durationMs, window: batch.length })
          outcomes[b.index] = failure
        }
      } else {
        // refused as a whole, so nothing was written: each alone says which record the database refuses
        ctx.emit({ method: 'UPDATE', outcome: failure.kind, durationMs: result.durationMs, window: batch.length })
        for (const b of batch) alone.push(b.index)
      }
    } else {
      let unmatched: typeof batch = []
      try {
        unmatched = judgeWindowRows(ctx, requests, batch, result.value, result.durationMs, outcomes)
      } catch (error) {
        // the statement committed: a target whose answer was not yet read may have been written by it
        for (const b of batch)
          outcomes[b.index] ??= { kind: 'unknown', message: `the window's statement committed, but its answer for record "${requests[b.index]!.id}" could not be read (${messageOf(error)}): it may have been written` }
      }
      // matched by no row of the statement's answer: not written, whatever the read that says why does
      if (unmatched.length > 0)
        await explainUnmatched(ctx, requests, unmatched, outcomes).catch((error: unknown) => {
          for (const u of unmatched) outcomes[u.index] ??= unexplained(messageOf(error))
        })
    }
  }
  // one at a time, in window order: as the executor would have written them without a window. Each answer is its
  // own: a write that throws (refused before it was sent, a catalogue changed since the window's) is that target's
  // error, never the window's, whose statement may have committed for the others
  for (const index of alone.sort((a, b) => a - b)) {
    try {
      outcomes[index] = await writeRecord(ctx, requests[index]!)
    } catch (error) {
      outcomes[index] = { kind: 'threw', error }
    }
  }
  return outcomes.map((o, i) => o ?? { kind: 'unknown', message: `no outcome was determined for record "${requests[i]!.id}"` })
}

/**
 * Each batch target's answer from the rows a committed window statement returned (see `writeWindow`); returns the
 * targets it matched no row of, which `explainUnmatched` explains.
 */
function judgeWindowRows<T extends { index: number; key: string }>(
  ctx: ConnectorContext,
  requests: readonly WriteRequest[],
  batch: readonly T[],
  returned: readonly Row[],
  durationMs: number,
  outcomes: (WriteOutcome | WriteThrew | undefined)[],
): T[] {
  // each row made a record once (it was made twice: once for its id, once for its outcome)
  const rowsById = new Map<string, SourceRecord[]>()
  for (const row of returned) {
    const record = toRecord(ctx, row)
    const rows = rowsById.get(record.id)
    if (rows) rows.push(record)
    else rowsById.set(record.id, [record])
  }
  // a row whose id names no request (an id the engine stores in another form): written, but whose? The
  // requests left without a row cannot then be said to be unwritten
  const claimed = new Set(batch.map((b) => requests[b.index]!.id))
  const stray = [...rowsById.keys()].filter((id) => !claimed.has(id))
  const unmatched: T[] = []
  for (const b of batch) {
    const request = requests[b.index]!
    const rows = rowsById.get(request.id) ?? []
    const record = rows.length === 1 ? rows[0]! : undefined
    if (record && sameVersion(ctx, record.version, request.expectedVersion)) {
      // autocommitted (RETURNING was final), so nothing could refuse it: written, but not safely
      ctx.emit({ method: 'UPDATE', targetId: request.id, outcome: 'unknown', durationMs, window: batch.length })
      outcomes[b.index] = {
        kind: 'unknown',
        message: `${unmovedVersion(ctx, request.id, record.version)}; the statement committed, so the write was made, and a writer still holding that version could overwrite it unseen`,
      }
    } else if (record) {
      ctx.emit({ method: 'UPDATE', targetId: request.id, outcome: 'written', durationMs, window: batch.length })
      outcomes[b.index] = { kind: 'written', status: 200, record }
    } else if (rows.length > 1) {
      ctx.emit({ method: 'UPDATE', targetId: request.id, outcome: 'unknown', durationMs, window: batch.length })
      outcomes[b.index] = { kind: 'unknown', message: `${rows.length} rows of ${ctx.endpoint} have ${ctx.idField} "${request.id}": the id is not unique and every one of them was written` }
    } else if (stray.length > 0) {
      ctx.emit({ method: 'UPDATE', targetId: request.id, outcome: 'unknown', durationMs, window: batch.length })
      outcomes[b.index] = {
        kind: 'unknown',
        message: `the statement returned rows with ${ctx.idField} ${stray.map((id) => `"${id}"`).join(', ')}, which match no id it was given: record "${request.id}" may be among them`,
      }
    } else {
      ctx.emit({ method: 'UPDATE', targetId: request.id, outcome: 'conflict', durationMs, window: batch.length })
      unmatched.push(b)
    }
  }
  return unmatched
}

/** The version every row of a window moves to: one past its own (integer), now (timestamp), or one fresh token. */
function sharedNextVersion(ctx: ConnectorContext, now: Date): unknown {
  if (ctx.versionType === 'integer') return sql`${sql.ref(ctx.versionField)} + 1`
  if (ctx.versionType === 'timestamp') return now.toISOString()
  // a token no record has held: each record still moves from its own version to one it never had
  return randomUUID()
}

/** After a window that did not match some rows: one read of them says why. Nothing was written to them. */
async function explainUnmatched(
  ctx: ConnectorContext,
  requests: readonly WriteRequest[],
  unmatched: readonly { index: number; key: string }[],
  outcomes: (WriteOutcome | WriteThrew | undefined)[],
): Promise<void> {
  const catalogue = await ctx.catalogue.recent()
  const compiled = selectRows(ctx)
    .where(idsIn(ctx, unmatched.map((u) => requests[u.index]!.id), catalogue.columns))
    .compile()
  const result = await timed(() => ctx.backend.run(compiled))
  if ('error' in result) {
    ctx.emit({ method: 'SELECT', outcome: 'error', durationMs: result.durationMs })
    for (const u of unmatched) outcomes[u.index] = unexplained(messageOf(result.error))
    return
  }
  ctx.emit({ method: 'SELECT', outcome: 'ok', durationMs: result.durationMs })
  const byId = new Map(result.value.map((row) => toRecord(ctx, row)).map((record) => [record.id, record]))
  // rows the engine's `=` found under no id asked (an integer id "007" finds the row 7): which target found which is
  // not known, so none of those targets is proven absent
  const named = new Set(unmatched.map((u) => requests[u.index]!.id))
  const others = [...byId.keys()].filter((id) => !named.has(id))
  for (const u of unmatched) {
    const request = requests[u.index]!
    const record = byId.get(request.id)
    if (record) outcomes[u.index] = unmatchedOutcome(ctx, request, record, true, keptFromUpdate(ctx, catalogue))
    else if (others.length > 0) outcomes[u.index] = { kind: 'conflict', reason: 'missing', message: `nothing was written: ${spelledOtherwise(ctx, request.id, others)}` }
    else outcomes[u.index] = notFound(ctx, request.id, catalogue)
  }
}

/** A target the window's statement matched no row of, whose row could not be read to say why: not written. */
function unexplained(why: string): WriteOutcome {
  return { kind: 'conflict', reason: 'precondition_failed', message: `nothing was written: the record did not match its id, version and precondition (reading it back failed: ${why})` }
}

function uniformKey(request: WriteRequest): string {
  return canonicalJson({ set: request.set, precondition: request.precondition, restores: request.restores ?? null })
}

import { sql, type SqlBool } from 'kysely'
import type { ReadByIdsResult, SourceRecord } from '../connector.js'
import { selectRows, timed, toRecord, type ConnectorContext } from './context.js'
import { readFailure } from './errors.js'
import { mistypedFieldsOf, mistypedMessage } from './page-judge.js'
import { idParam } from './resource.js'

// keeps each IN list well under every driver's parameter limit
const READ_BY_IDS_CHUNK = 500

/**
 * Reads records by id outside any session, in chunks. An id that cannot be one of the id column's type is
 * missing without a query; a chunk that fails marks its ids failed, not missing, since they may exist. A record
 * holding a value of another type than declared is failed too, naming the field (see `createPageJudge`).
 */
export async function readByIds(ctx: ConnectorContext, ids: readonly string[], signal?: AbortSignal): Promise<ReadByIdsResult> {
  const { idField, idType, endpoint } = ctx
  const unique = [...new Set(ids)]
  const records = new Map<string, SourceRecord>()
  const failed: { id: string; message: string }[] = []
  const mistyped = mistypedFieldsOf(ctx.fields)
  const queryable = unique.filter((id) => idParam(idType, id) !== undefined)
  for (let start = 0; start < queryable.length; start += READ_BY_IDS_CHUNK) {
    const chunk = queryable.slice(start, start + READ_BY_IDS_CHUNK)
    if (ctx.isClosing() || signal?.aborted) {
      const message = ctx.isClosing() ? 'the connector is closed' : 'the read was aborted'
      for (const id of chunk) failed.push({ id, message })
      continue
    }
    const compiled = selectRows(ctx)
      .where(sql<SqlBool>`${sql.ref(idField)} in (${sql.join(chunk.map((id) => idParam(idType, id)!))})`)
      .compile()
    const result = await timed(() => ctx.backend.run(compiled))
    if ('error' in result) {
      ctx.emit({ method: 'SELECT', outcome: 'error', durationMs: result.durationMs })
      const message = readFailure(`${endpoint} by id`, result.error)
      for (const id of chunk) failed.push({ id, message })
      continue
    }
    ctx.emit({ method: 'SELECT', outcome: 'ok', durationMs: result.durationMs, ...(chunk.length === 1 ? { targetId: chunk[0] } : {}) })
    for (const row of result.value) {
      const record = toRecord(ctx, row)
      // a record holding a value of another type than declared cannot be judged by a precondition: failed, saying so
      const wrong = mistyped(record)
      if (wrong === null) records.set(record.id, record)
      else failed.push({ id: record.id, message: mistypedMessage(`${endpoint} by id`, record, wrong, ctx.fields) })
    }
  }
  const failedIds = new Set(failed.map((f) => f.id))
  return { records, missing: unique.filter((id) => !records.has(id) && !failedIds.has(id)), failed }
}

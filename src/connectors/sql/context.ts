import { performance } from 'node:perf_hooks'
import type { SourceRecord, UpstreamCall, UpstreamCallListener } from '../connector.js'
import type { Backend, Row } from './backend.js'
import type { CatalogueFacts } from './catalogue-facts.js'
import type { SqlResource } from './resource.js'
import type { SqlDialectName, SqlLocation } from './url.js'

/** What one upstream statement reports; the connector adds where it went. */
export type CallEvent = Omit<UpstreamCall, 'source' | 'endpoint' | 'status'>

/** Everything the reads and the write of one connector share. */
export interface ConnectorContext extends SqlResource {
  readonly dialect: SqlDialectName
  readonly location: SqlLocation
  readonly table: string
  readonly source: string
  readonly columns: readonly string[]
  /** How the table is named in messages and call events. */
  readonly endpoint: string
  readonly backend: Backend
  readonly idleTimeoutMs: number
  readonly clock: () => Date
  isClosing(): boolean
  emit(call: CallEvent): void
  /** A row of the declared columns as a record (`sourceRecordReader` of this resource). */
  readonly recordOf: (row: Row) => SourceRecord
  /** The same for a page's rows, which the read owns: each row becomes its record's fields (`ownedRowReader`). */
  readonly pageRecordOf: (row: Row) => SourceRecord
  /**
   * What the engine's catalogue says of the declared columns and of the table (`catalogueFactsOf`): `fresh()` read
   * from now on (a session's opening, a run's start), `recent()` read within the connector's max age (writes).
   */
  readonly catalogue: { fresh(): Promise<CatalogueFacts>; recent(): Promise<CatalogueFacts> }
}

export function callEmitter(onCall: UpstreamCallListener | undefined, source: string, endpoint: string): (call: CallEvent) => void {
  return (call) => {
    if (!onCall) return
    try {
      onCall({ source, endpoint, status: null, ...call })
    } catch {
      // a listener's failure must not change what happened upstream
    }
  }
}

/** Never throws: a failed statement is a result the caller reports, with its duration either way. */
export async function timed<T>(work: () => Promise<T>): Promise<{ value: T; durationMs: number } | { error: unknown; durationMs: number }> {
  const started = performance.now()
  try {
    const value = await work()
    return { value, durationMs: performance.now() - started }
  } catch (error) {
    return { error, durationMs: performance.now() - started }
  }
}

export function toRecord(ctx: ConnectorContext, row: Row): SourceRecord {
  return ctx.recordOf(row)
}

/** Only the declared columns: an undeclared column never leaves the upstream. */
export function selectRows(ctx: ConnectorContext) {
  return ctx.backend.db.selectFrom(ctx.table).select([...ctx.columns])
}

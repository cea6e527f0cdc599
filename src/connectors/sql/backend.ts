import type { CompiledQuery, Kysely } from 'kysely'

/** Rows of the declared columns, as the driver returns them. */
export type Row = Record<string, unknown>

/** One dedicated connection holding one read transaction. */
export interface SessionHandle {
  readonly snapshot: string
  run(query: CompiledQuery): Promise<Row[]>
  close(): Promise<void>
}

/**
 * One conditional UPDATE. `returning` is the statement with `RETURNING` the declared columns (SQLite,
 * PostgreSQL); `plain` the same without it and `readBack` the row by id, for an engine without `RETURNING`
 * on UPDATE (MySQL, MariaDB), which runs both in one transaction. `accept` sees the rows as written and may
 * refuse them (a message): an engine that can still roll back then does, and throws `NotCommittedError`.
 */
export interface ConditionalUpdate {
  readonly returning: CompiledQuery
  readonly plain: CompiledQuery
  readonly readBack: CompiledQuery
  readonly accept: (rows: readonly Row[]) => string | undefined
}

/** The connections of one dialect; the rest of the connector only builds queries and reads their rows. */
export interface Backend {
  readonly db: Kysely<any>
  /** Runs on the shared connection(s): reads by id and writes, outside any session. */
  run(query: CompiledQuery): Promise<Row[]>
  /** The rows the UPDATE changed, as they are after it (none when it matched nothing). */
  update(statement: ConditionalUpdate): Promise<Row[]>
  openHandle(): Promise<SessionHandle>
  destroy(): Promise<void>
}

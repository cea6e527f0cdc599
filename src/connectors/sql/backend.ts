import type { CompiledQuery, Kysely } from 'kysely'

/** Rows of the declared columns, as the driver returns them. */
export type Row = Record<string, unknown>

/** One query's rows read a few at a time, inside the session's transaction. */
export interface SessionStream {
  /** the next rows, at most `count` (fewer: the query has no more) */
  fetch(count: number): Promise<Row[]>
  close(): Promise<void>
}

/** One dedicated connection holding one read transaction. */
export interface SessionHandle {
  readonly snapshot: string
  run(query: CompiledQuery): Promise<Row[]>
  /**
   * Where the engine keeps a query open across round trips (a server-side cursor on PostgreSQL), a walk runs
   * one query for all its pages instead of one per page: planned once, never re-sorted per page.
   */
  stream?(query: CompiledQuery): Promise<SessionStream>
  close(): Promise<void>
}

/**
 * One conditional UPDATE. `returning` is the statement with `RETURNING` the declared columns (SQLite,
 * PostgreSQL); `plain` the same without it and `readBack` the row by id, for an engine without `RETURNING`
 * on UPDATE (MySQL, MariaDB), which runs both in one transaction. `accept` sees the rows as written and may
 * refuse them (a message): an engine that can still roll back then does, and throws `NotCommittedError`.
 * The writers give the statements as getters, so an engine compiles only the statements it runs.
 *
 * `returningIsFinal`: the catalogue shows nothing that changes a row after the UPDATE computed its
 * `RETURNING` (no UPDATE trigger or rule, a plain table) and a version column that moves on every write. Then
 * the `RETURNING` rows are the answer, autocommitted (one round trip: the common case). Otherwise a
 * `RETURNING` engine runs the UPDATE, `rereadOf` the rows it returned (the rows as the statement left them,
 * after its triggers) and `accept` in one transaction, and answers the rows read again.
 *
 * `judgedBeforeCommit`: the `RETURNING` rows are final, but something besides the set may have moved in them (a
 * generated column): the UPDATE and `accept` are one transaction, without the read again, so a refusal rolls back.
 */
export interface ConditionalUpdate {
  readonly returning: CompiledQuery
  readonly plain: CompiledQuery
  readonly readBack: CompiledQuery
  readonly returningIsFinal: boolean
  readonly judgedBeforeCommit: boolean
  readonly rereadOf: (returned: readonly Row[]) => CompiledQuery
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

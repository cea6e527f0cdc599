import type { CompiledQuery, Kysely } from 'kysely'

/** Rows of the declared columns, as the driver returns them. */
export type Row = Record<string, unknown>

/** One dedicated connection holding one read transaction. */
export interface SessionHandle {
  readonly snapshot: string
  run(query: CompiledQuery): Promise<Row[]>
  close(): Promise<void>
}

/** The connections of one dialect; the rest of the connector only builds queries and reads their rows. */
export interface Backend {
  readonly db: Kysely<any>
  /** Runs on the shared connection(s): reads by id and writes, outside any session. */
  run(query: CompiledQuery): Promise<Row[]>
  openHandle(): Promise<SessionHandle>
  destroy(): Promise<void>
}

import BetterSqlite3 from 'better-sqlite3'
import { statSync } from 'node:fs'
import type http from 'node:http'
import { join } from 'node:path'
import pg from 'pg'
import { sendJson, startUpstream, type TestUpstream } from '../connectors/http/upstream-server.js'
import { createTempDir, createTestPostgresDatabase, type StoreKind, type TempDir, type TestDatabase } from '../support/stores.js'

/** Records of the three upstreams: ~8 KB each, far more in all than the sockets and the stream's queue take in. */
export const DOC_COUNT = 3000
const NOTE = 'n'.repeat(8000)
export const doc = (i: number) => ({ id: `d${String(i).padStart(5, '0')}`, note: NOTE, version: 1 })

/** A table of DOC_COUNT docs on the SQLite file (WAL) or PostgreSQL database; the same on an HTTP API (cursor paging). */
export interface StalledSearchUpstreams {
  readonly dir: TempDir
  readonly sqliteFile: string
  readonly pg: TestDatabase
  readonly web: TestUpstream
  /** the resources of a gateway config reading them: `lite` (sql, SQLite), `pgup` (sql, PostgreSQL), `web` (http) */
  readonly resources: Record<string, unknown>
  /** two gateways' stores: SQLite files of their own or fresh PostgreSQL databases */
  readonly stores: readonly [string, string]
  close(): Promise<void>
}

export async function startStalledSearchUpstreams(kind: StoreKind): Promise<StalledSearchUpstreams> {
  const dir = await createTempDir('warrant-stalled-search-')
  const sqliteFile = join(dir.path, 'upstream.db')
  const lite = new BetterSqlite3(sqliteFile)
  lite.pragma('journal_mode = WAL')
  lite.exec('create table docs (id text primary key, note text not null, version integer not null)')
  const insert = lite.prepare('insert into docs values (?, ?, ?)')
  lite.transaction(() => {
    for (let i = 0; i < DOC_COUNT; i++) insert.run(doc(i).id, NOTE, 1)
  })()
  // kept open, as the application that owns the file keeps it: its WAL and shared memory exist while the gateway reads
  const pgDb = await createTestPostgresDatabase()
  const client = new pg.Client({ connectionString: pgDb.url })
  await client.connect()
  await client.query('create table docs (id text primary key, note text not null, version integer not null)')
  await client.query(`insert into docs select 'd' || lpad(i::text, 5, '0'), repeat('n', 8000), 1 from generate_series(0, ${DOC_COUNT - 1}) i`)
  await client.end()
  const web = await startUpstream((req, res: http.ServerResponse) => {
    const from = Number(req.url.searchParams.get('cursor') ?? 0)
    const limit = Number(req.url.searchParams.get('limit') ?? 100)
    const items = Array.from({ length: Math.max(0, Math.min(limit, DOC_COUNT - from)) }, (_, k) => doc(from + k))
    sendJson(res, 200, { items, next_cursor: from + limit < DOC_COUNT ? String(from + limit) : null })
  })
  const storeDbs = kind === 'postgres' ? [await createTestPostgresDatabase(), await createTestPostgresDatabase()] : []
  const sqlResource = (url: string) => ({
    environment: { name: 'stalled-search' },
    connector: { kind: 'sql', url, table: 'docs' },
    fields: { id: 'string', note: 'string', version: 'integer' },
    review_fields: ['id', 'note'],
    version_field: 'version',
  })
  return {
    dir,
    sqliteFile,
    pg: pgDb,
    web,
    stores: kind === 'postgres' ? [storeDbs[0]!.url, storeDbs[1]!.url] : [`sqlite:${join(dir.path, 'warrant.db')}`, `sqlite:${join(dir.path, 'warrant-2.db')}`],
    resources: {
      lite: sqlResource(`sqlite:${sqliteFile}`),
      pgup: sqlResource(pgDb.url),
      web: {
        environment: { name: 'stalled-search' },
        connector: { kind: 'http', sources: [{ name: 'main', base_url: web.origin }], list: { path: '/docs', page_size_param: 'limit', pagination: { style: 'cursor' } }, get: { path: '/docs/{id}' }, version: { from: 'field', field: 'version' }, timeout_ms: 5000 },
        fields: { id: 'string', note: 'string', version: 'integer' },
        review_fields: ['id', 'note'],
      },
    },
    async close() {
      lite.close()
      await web.close()
      await pgDb.drop()
      for (const db of storeDbs) await db.drop()
      await dir.drop()
    },
  }
}

/**
 * What the upstream database holds for the walks reading it: SQLite, whether a checkpoint of its WAL is held back
 * (a write made now, then `wal_checkpoint(PASSIVE)` from another connection: frames left uncopied when a reader's
 * snapshot is older) and the WAL's size; PostgreSQL, the sessions on the upstream database in a transaction or
 * holding back the xmin horizon (what stops vacuum).
 */
export async function upstreamHeld(up: StalledSearchUpstreams, which: 'lite' | 'pgup'): Promise<{ held: boolean; detail: string }> {
  if (which === 'lite') {
    const db = new BetterSqlite3(up.sqliteFile)
    try {
      // a write the application makes meanwhile (to a table of its own: the walk's rows stay as they are)
      db.exec('create table if not exists app_log (at integer, body blob)')
      db.prepare('insert into app_log values (?, zeroblob(4096))').run(Date.now())
      // PASSIVE copies every frame no reader's snapshot still needs: a frame left is one a read transaction holds
      const [result] = db.pragma('wal_checkpoint(PASSIVE)') as { busy: number; log: number; checkpointed: number }[]
      const wal = statSync(`${up.sqliteFile}-wal`, { throwIfNoEntry: false })?.size ?? 0
      return { held: result!.checkpointed < result!.log, detail: `checkpoint ${JSON.stringify(result)}, wal ${wal} bytes` }
    } finally {
      db.close()
    }
  }
  const client = new pg.Client({ connectionString: up.pg.url })
  await client.connect()
  try {
    const { rows } = await client.query<{ state: string; backend_xmin: string | null; xact_age_ms: number | null }>(
      `select state, backend_xmin::text, (extract(epoch from now() - xact_start) * 1000)::int as xact_age_ms from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and (xact_start is not null or backend_xmin is not null)`,
    )
    return { held: rows.length > 0, detail: JSON.stringify(rows) }
  } finally {
    await client.end()
  }
}

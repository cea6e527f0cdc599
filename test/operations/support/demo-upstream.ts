import BetterSqlite3 from 'better-sqlite3'
import mysql from 'mysql2/promise'
import pg from 'pg'

/** A demo row's columns a bulk-flow test checks. */
export interface DemoUpstreamRow {
  readonly id: string
  readonly status: string
  readonly collection: string
  readonly pause_reason: string
  readonly version: number
}

/** The demo `subscriptions` table read and changed over its own connection, on whichever engine holds it. */
export interface DemoUpstream {
  rows(ids: readonly string[]): Promise<Map<string, DemoUpstreamRow>>
  /** One statement with `?` placeholders. */
  run(statement: string, ...params: unknown[]): Promise<void>
  close(): Promise<void>
}

const COLUMNS = 'select id, status, collection, pause_reason, version from subscriptions where id in'

export async function openDemoUpstream(url: string): Promise<DemoUpstream> {
  const toMap = (rows: DemoUpstreamRow[]) => new Map(rows.map((r) => [r.id, { ...r, version: Number(r.version) }]))
  const marks = (n: number) => Array.from({ length: n }, () => '?').join(', ')
  if (url.startsWith('sqlite:')) {
    const db = new BetterSqlite3(url.slice('sqlite:'.length))
    return {
      rows: async (ids) => toMap(db.prepare(`${COLUMNS} (${marks(ids.length)})`).all(...ids) as DemoUpstreamRow[]),
      run: async (statement, ...params) => void db.prepare(statement).run(...params),
      close: async () => void db.close(),
    }
  }
  if (url.startsWith('postgres')) {
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    const numbered = (statement: string) => {
      let i = 0
      return statement.replace(/\?/g, () => `$${++i}`)
    }
    return {
      rows: async (ids) => toMap((await client.query(numbered(`${COLUMNS} (${marks(ids.length)})`), [...ids])).rows),
      run: async (statement, ...params) => void (await client.query(numbered(statement), params)),
      close: () => client.end(),
    }
  }
  const parsed = new URL(url)
  const conn = await mysql.createConnection({ host: parsed.hostname, port: Number(parsed.port || 3306), user: parsed.username, database: parsed.pathname.slice(1) })
  return {
    rows: async (ids) => toMap((await conn.query(`${COLUMNS} (${marks(ids.length)})`, [...ids]))[0] as DemoUpstreamRow[]),
    run: async (statement, ...params) => void (await conn.query(statement, params)),
    close: () => conn.end(),
  }
}

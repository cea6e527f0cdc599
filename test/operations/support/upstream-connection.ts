import BetterSqlite3 from 'better-sqlite3'
import mysql from 'mysql2/promise'
import pg from 'pg'

export type ServerDialect = 'mysql' | 'postgres'

/** A connection of the test's own to a server upstream (to hold a row lock, read what was written): statements, and a close. */
export async function openUpstream(dialect: ServerDialect, url: string): Promise<{ run(text: string): Promise<any[]>; close(): Promise<void> }> {
  if (dialect === 'postgres') {
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    client.on('error', () => undefined)
    return { run: async (text) => (await client.query(text)).rows, close: () => client.end() }
  }
  const conn = await mysql.createConnection(url)
  return { run: async (text) => (await conn.query(text))[0] as any[], close: () => conn.end() }
}

/** A test's own connection to any demo upstream (a sqlite file, PostgreSQL, MariaDB), by its url: statements, rows, and a close. */
export interface AnyUpstream {
  exec(statement: string): Promise<void>
  rows(statement: string): Promise<unknown[]>
  close(): Promise<void>
}

export async function openAnyUpstream(url: string): Promise<AnyUpstream> {
  if (url.startsWith('sqlite:')) {
    const db = new BetterSqlite3(url.slice('sqlite:'.length))
    return { exec: async (s) => void db.exec(s), rows: async (s) => db.prepare(s).all(), close: async () => void db.close() }
  }
  const { run, close } = await openUpstream(url.startsWith('mysql:') ? 'mysql' : 'postgres', url)
  return { exec: async (s) => void (await run(s)), rows: run, close }
}

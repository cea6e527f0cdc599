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

import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { sql } from 'kysely'
import { parseSqlUrl } from '../../../src/connectors/sql/index.js'
import { mysqlBackend, SESSION_SQL_MODE } from '../../../src/connectors/sql/mysql-backend.js'
import type { Backend } from '../../../src/connectors/sql/backend.js'
import { createEngine, type Engine } from './support/engine.js'
import { ledgerResource } from './support/upstream.js'

/**
 * Without STRICT in sql_mode MySQL and MariaDB keep a value a column cannot hold as another one, with only a
 * warning: text in an INT as its leading digits, a value too long cut, a date that names no day as a zero date.
 * The connector's reads back catch a set field kept otherwise, but a server (or a DBA) may run with sql_mode ''.
 * Every connection of the connector (writes and read sessions) adds STRICT_ALL_TABLES to its own session's
 * sql_mode, keeping the server's other flags; never the global one (the server is shared).
 */
describe('sql on MariaDB: the connector’s connections are strict whatever the server’s default', () => {
  let engine: Engine
  let backend: Backend
  before(async () => {
    engine = await createEngine('mysql')
    await engine.exec('create table things (id varchar(10) primary key, version int not null, n int)')
    const location = parseSqlUrl(engine.url)
    assert.equal(location.dialect, 'mysql')
    backend = mysqlBackend(location, { resource: ledgerResource(engine.url, { id: 'string', version: 'integer' }) })
  })
  after(async () => {
    await backend?.destroy()
    await engine?.drop()
  })

  it('a lax session keeps text in an INT as a number (what a non-strict server does)', async () => {
    await engine.exec(`set session sql_mode = ''`)
    await engine.exec(`insert into things values ('lax', 1, '12abc')`)
    assert.deepEqual(await engine.rows(`select n from things where id = 'lax'`), [{ n: 12 }])
  })

  it('the write connections add STRICT_ALL_TABLES and keep the server’s other flags', async () => {
    const [row] = await backend.run(sql`select @@session.sql_mode as mode, @@global.sql_mode as global`.compile(backend.db))
    const mode = String(row!.mode).split(',')
    assert.ok(mode.includes('STRICT_ALL_TABLES'), String(row!.mode))
    for (const flag of String(row!.global).split(',').filter((f) => f !== '')) assert.ok(mode.includes(flag), `${flag} kept: ${row!.mode}`)
  })

  it('so does a read session’s connection, and a value an INT cannot hold fails there instead of being kept', async () => {
    const handle = await backend.openHandle()
    try {
      const [row] = await handle.run(sql`select @@session.sql_mode as mode`.compile(backend.db))
      assert.ok(String(row!.mode).split(',').includes('STRICT_ALL_TABLES'), String(row!.mode))
    } finally {
      await handle.close()
    }
    await assert.rejects(backend.run(sql`insert into things values ('strict', 1, '12abc')`.compile(backend.db)), /Incorrect integer value|Data truncated/)
  })
})

/**
 * mysql2 puts every parameter into the statement's text itself, escaping a quote with a backslash. A server whose
 * sql_mode has NO_BACKSLASH_ESCAPES reads `'\' or 1=1 -- '` as the string '\' and the rest as SQL: a filter or an
 * id holding a quote rewrote the statement (an UPDATE for one id wrote every row). EMPTY_STRING_IS_NULL (and
 * MariaDB's ORACLE mode) makes a filter's '' a NULL, which no row equals: rows holding '' were left out of a
 * complete answer. The connector's sessions take neither flag from the server, keeping the others.
 */
describe('sql on MariaDB: the connector’s sessions never take NO_BACKSLASH_ESCAPES or EMPTY_STRING_IS_NULL', () => {
  let engine: Engine
  before(async () => {
    engine = await createEngine('mysql')
    await engine.exec("create table inj (id varchar(20) primary key, n int, s varchar(5))")
    await engine.exec("insert into inj values ('a', 0, ''), ('b', 0, 'x'), ('c', 0, '')")
  })
  after(() => engine?.drop())

  for (const server of ['NO_BACKSLASH_ESCAPES,ANSI_QUOTES', 'EMPTY_STRING_IS_NULL,ANSI_QUOTES', 'NO_BACKSLASH_ESCAPES,EMPTY_STRING_IS_NULL,ANSI_QUOTES', 'ORACLE'])
    it(`a server in ${server}: the session drops the flags, keeps the others, and a quote or '' is a value`, async () => {
      await engine.exec(`set session sql_mode = '${server}'`)
      const kept = String((await engine.rows('select @@session.sql_mode as mode'))[0]!.mode).split(',').filter((f) => !DROPPED.has(f))
      await engine.exec(SESSION_SQL_MODE)
      const mode = String((await engine.rows('select @@session.sql_mode as mode'))[0]!.mode).split(',')
      for (const flag of DROPPED) assert.ok(!mode.includes(flag), `${flag} dropped: ${mode}`)
      assert.ok(mode.includes('STRICT_ALL_TABLES'), String(mode))
      for (const flag of kept) assert.ok(mode.includes(flag), `${flag} kept: ${mode}`)
      // as mysql2 sends parameters: inside the statement's text
      const evil = "' or 1=1 -- "
      await engine.exec(`update inj set n = n + 1 where id = '${evil.replace(/'/g, "\\'")}'`)
      assert.deepEqual(await engine.rows('select id from inj where n > 0'), [])
      assert.deepEqual(await engine.rows("select id from inj where s = '' order by id"), [{ id: 'a' }, { id: 'c' }])
      await engine.exec("set session sql_mode = default")
    })
})

const DROPPED = new Set(['NO_BACKSLASH_ESCAPES', 'EMPTY_STRING_IS_NULL', 'ORACLE'])

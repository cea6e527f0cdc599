import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import mysql from 'mysql2'
import { SESSION_SQL_MODE } from '../../../src/connectors/sql/mysql-backend.js'
import { assertCompleteSearch, createEngine, search, type Engine } from './support/engine.js'

/**
 * A server's defaults reach every session it opens (my.cnf, SET GLOBAL, init_connect): here each new connection of
 * the connector is given them first, as a server would, by a listener that runs before the connector's own.
 * With autocommit off, the first SELECT of a pooled connection opened a transaction nobody committed: every later
 * read by id on it saw that snapshot, a row inserted since "missing", a row changed since at its old version. With
 * sql_select_limit set, a read by id of more ids than the limit called the rest missing. Under
 * NO_BACKSLASH_ESCAPES a filter value holding a quote rewrote the statement. Under `SET NAMES latin1` (an init_connect
 * of an older setup) a record showed '😀' as '?', and a filter asking '😀' found nothing, complete.
 */
const FIELDS = { id: 'string', version: 'integer', name: 'string' }
const createPool = mysql.createPool

/** `rewrite`: what the server makes of the connector's own statements (one it refuses, say). */
function withServerDefaults(statements: readonly string[], rewrite: (text: string) => string = (text) => text) {
  ;(mysql as { createPool: typeof createPool }).createPool = ((options: mysql.PoolOptions) => {
    const pool = createPool(options)
    pool.on('connection', (conn) => {
      for (const statement of statements) conn.query(statement, () => undefined)
      const query = conn.query.bind(conn) as (text: unknown, ...rest: unknown[]) => unknown
      ;(conn as { query: unknown }).query = (text: unknown, ...rest: unknown[]) => query(typeof text === 'string' ? rewrite(text) : text, ...rest)
    })
    return pool
  }) as typeof createPool
}

describe('sql on MariaDB: a server whose session defaults would make reads say less than the table holds', () => {
  let engine: Engine
  before(async () => {
    engine = await createEngine('mysql')
    await engine.exec('create table things (id varchar(10) primary key, version integer not null, name varchar(20))')
    await engine.exec("insert into things values ('a', 1, 'x'), ('b', 1, 'x'), ('c', 1, 'x'), ('d', 1, \"it's\"), ('f', 1, '😀')")
  })
  after(async () => {
    ;(mysql as { createPool: typeof createPool }).createPool = createPool
    await engine?.drop()
  })

  it('autocommit off: a read by id sees a row inserted and a row changed since the last read', async () => {
    withServerDefaults(['SET SESSION autocommit = 0'])
    const connector = engine.connector('things', FIELDS, {}, { maxConnections: 1 })
    const first = await connector.readByIds(['a', 'e'])
    assert.deepEqual(first.missing, ['e'])
    await engine.exec("insert into things values ('e', 1, 'x')")
    await engine.exec("update things set version = 2 where id = 'a'")
    const again = await connector.readByIds(['a', 'e'])
    assert.deepEqual([again.missing, again.records.get('a')?.version, again.records.has('e')], [[], '2', true])
    await engine.exec("delete from things where id = 'e'")
  })

  it('sql_select_limit: a read by id of more ids than the limit reads them all', async () => {
    withServerDefaults(['SET SESSION sql_select_limit = 2'])
    const read = await engine.connector('things', FIELDS).readByIds(['a', 'b', 'c', 'd'])
    assert.deepEqual([[...read.records.keys()].sort(), read.missing], [['a', 'b', 'c', 'd'], []])
  })

  it('NO_BACKSLASH_ESCAPES: a filter value holding a quote is a value', async () => {
    withServerDefaults(["SET SESSION sql_mode = concat(@@session.sql_mode, ',NO_BACKSLASH_ESCAPES')"])
    await assertCompleteSearch(engine.connector('things', FIELDS), { name: "it's" }, ['d'])
    await assertCompleteSearch(engine.connector('things', FIELDS), { name: "' or 1=1 -- " }, [])
  })

  it('the session sql_mode cannot be set: the connection is never used, so no parameter is read under NO_BACKSLASH_ESCAPES (fail closed)', async () => {
    withServerDefaults(["SET SESSION sql_mode = concat(@@session.sql_mode, ',NO_BACKSLASH_ESCAPES')"], (text) => (text === SESSION_SQL_MODE ? "SET SESSION sql_mode = 'NO_SUCH_MODE'" : text))
    const connector = engine.connector('things', FIELDS)
    // a read on it would carry every id and filter value as SQL text the server reads its own way
    const read = await connector.readByIds(['a']).catch((error: unknown) => ({ threw: String(error) }))
    assert.ok('threw' in read || (read.records.size === 0 && read.failed.length === 1), JSON.stringify(read, (_k, v: unknown) => (v instanceof Map ? [...v] : v)))
    const envelope = await search(connector, { name: 'x' }, 2)
    assert.deepEqual([envelope.items.length, envelope.complete], [0, false])
  })

  it('SET NAMES utf8mb4 refused: the connection is never used (a record would show \'😀\' as \'?\')', async () => {
    withServerDefaults(['SET NAMES latin1'], (text) => (text === 'SET NAMES utf8mb4' ? 'SET NAMES no_such_charset' : text))
    const read = await engine.connector('things', FIELDS).readByIds(['f']).catch((error: unknown) => ({ threw: String(error) }))
    assert.ok('threw' in read || (read.records.size === 0 && read.failed.length === 1), JSON.stringify(read, (_k, v: unknown) => (v instanceof Map ? [...v] : v)))
  })

  it('SET NAMES latin1: a record shows what the column holds, and a filter asking it finds it', async () => {
    withServerDefaults(['SET NAMES latin1'])
    const connector = engine.connector('things', FIELDS)
    const read = await connector.readByIds(['f'])
    assert.equal(read.records.get('f')?.fields.name, '😀')
    await assertCompleteSearch(connector, { name: '😀' }, ['f'])
  })

  it('READ COMMITTED by default: a walk still reads one snapshot (the session asks REPEATABLE READ itself)', async () => {
    withServerDefaults(["SET SESSION tx_isolation = 'READ-COMMITTED'"])
    const session = await engine.connector('things', FIELDS).openSession()
    try {
      assert.equal(session.consistentSnapshot, true)
      const first = await session.readPage({ source: 'things-db', filter: {}, position: null, pageSize: 1 })
      assert.equal(first.kind, 'page')
      await engine.exec("update things set name = 'moved' where id = 'c'")
      const rest = await session.readPage({ source: 'things-db', filter: {}, position: first.kind === 'page' ? first.next : null, pageSize: 10 })
      assert.deepEqual(rest.kind === 'page' ? rest.items.find((r) => r.id === 'c')?.fields.name : rest, 'x')
    } finally {
      await session.close()
      await engine.exec("update things set name = 'x' where id = 'c'")
    }
  })
})

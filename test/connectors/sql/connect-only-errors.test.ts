import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import BetterSqlite3 from 'better-sqlite3'
import mysql from 'mysql2/promise'
import pg from 'pg'
import { classifyWriteError, NotCommittedError, NotConnectedError } from '../../../src/connectors/sql/errors.js'
import { closedPort } from './support/closed-port.js'
import { errorOf } from './support/error-of.js'
import { TEST_MYSQL_ADMIN_URL, TEST_POSTGRES_ADMIN_URL } from '../../support/stores.js'

/**
 * An error the classifier gets without the step it was raised at (not wrapped as NotConnectedError: a statement
 * on a connection already open, a COMMIT) was judged by its code alone: every "could not connect" code, and
 * MySQL's 1049 (unknown database), became `rejected` 503 "nothing was written", a validation refusal. Some of
 * these codes are only ever raised while a connection opens, before any statement (ECONNREFUSED, a name that
 * does not resolve, PostgreSQL 3D000, MySQL 1049: MariaDB answers a statement naming a missing database with
 * 1146): `not_sent`, whatever step they reach the classifier from. Others also end a connection a statement is
 * already on (EHOSTUNREACH: the route went away under it; SQLITE_CANTOPEN: a journal the statement needed): the
 * code proves nothing, so `unknown`; where the step is known (a transaction never committed) that step says it.
 * Every error here is a real driver's, from a real connection attempt.
 */
const pgConnect = (url: string) => errorOf(async () => {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 })
  client.on('error', () => undefined)
  await client.connect()
})

describe('classifyWriteError: a code raised only while connecting is not_sent; one that may end a live connection is not', () => {
  it('mysql 1049 (unknown database), raised at the handshake: not_sent, never a validation refusal', async () => {
    const url = new URL(TEST_MYSQL_ADMIN_URL)
    url.pathname = '/warrant_no_such_database'
    const error = await errorOf(() => mysql.createConnection(url.toString()))
    assert.equal((error as { errno?: number }).errno, 1049)
    const failure = classifyWriteError(error)
    assert.equal(failure.kind, 'not_sent', JSON.stringify(failure))
    assert.match(failure.message, /Unknown database.*no statement was sent, so nothing was written/)
  })

  it('postgres 3D000 (no such database) and ECONNREFUSED: not_sent', async () => {
    const missing = new URL(TEST_POSTGRES_ADMIN_URL)
    missing.pathname = '/warrant_no_such_database'
    const refused = `postgres://postgres@127.0.0.1:${await closedPort()}/nowhere`
    for (const [url, code] of [[missing.toString(), '3D000'], [refused, 'ECONNREFUSED']] as const) {
      const error = await pgConnect(url)
      assert.equal((error as { code?: string }).code, code)
      const failure = classifyWriteError(error)
      assert.equal(failure.kind, 'not_sent', `${code}: ${JSON.stringify(failure)}`)
    }
  })

  it('EHOSTUNREACH may end a connection a statement is on: unknown alone, rolled_back after an UPDATE that never committed, never rejected', async (t) => {
    // 100::/64 is the discard-only prefix: this host answers it with "no route" (EHOSTUNREACH)
    const error = await pgConnect('postgres://postgres@[100::1]:5432/nowhere')
    if ((error as { code?: string }).code !== 'EHOSTUNREACH') return t.skip(`this network answers 100::1 with ${(error as { code?: string }).code ?? String(error)}, not EHOSTUNREACH`)
    assert.equal(classifyWriteError(error).kind, 'unknown', 'a COMMIT whose answer was lost may have been applied')
    assert.equal(classifyWriteError(new NotCommittedError('the UPDATE was sent', error)).kind, 'rolled_back')
    assert.equal(classifyWriteError(new NotConnectedError(error)).kind, 'not_sent', 'the step proves it: no connection was opened')
  })

  it('SQLITE_CANTOPEN from a statement (a journal it could not open) is unknown; from the connector opening the file, not_sent', async () => {
    // a folder where the database file should be: SQLite cannot open it
    const folder = await mkdtemp(join(tmpdir(), 'warrant-cantopen-'))
    const error = await errorOf(async () => new BetterSqlite3(folder)).finally(() => rm(folder, { recursive: true }))
    assert.equal((error as { code?: string }).code, 'SQLITE_CANTOPEN')
    assert.equal(classifyWriteError(error).kind, 'unknown')
    assert.equal(classifyWriteError(new NotConnectedError(error)).kind, 'not_sent')
  })
})

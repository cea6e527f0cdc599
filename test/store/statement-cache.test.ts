import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import BetterSqlite3 from 'better-sqlite3'
import { cachingStatements } from '../../src/store/statement-cache.js'

describe('cachingStatements', () => {
  test('the same SQL text gets the same prepared statement; one still being iterated is never handed out again', () => {
    const raw = new BetterSqlite3(':memory:')
    raw.exec('create table t (n integer); insert into t values (1), (2), (3)')
    const db = cachingStatements(raw)
    const sql = 'select n from t order by n'
    const first = db.prepare(sql)
    assert.equal(db.prepare(sql), first)
    const walking = first.iterate([])
    assert.deepEqual(walking.next().value, { n: 1 })
    // a query with the same text while the first is mid-iteration: a statement of its own, and a right answer
    const second = db.prepare(sql)
    assert.notEqual(second, first)
    assert.deepEqual(second.all([]), [{ n: 1 }, { n: 2 }, { n: 3 }])
    assert.deepEqual([...walking], [{ n: 2 }, { n: 3 }])
    assert.equal(db.prepare(sql), first, 'once the iteration ended the cached statement serves again')
    db.close()
  })

  test('at most 256 statements are kept: the least recently used is prepared again', () => {
    const raw = new BetterSqlite3(':memory:')
    const db = cachingStatements(raw)
    const kept = db.prepare('select 0')
    for (let i = 1; i <= 256; i++) db.prepare(`select ${i}`)
    assert.notEqual(db.prepare('select 0'), kept, 'evicted after 256 others')
    const recent = db.prepare('select 256')
    assert.equal(db.prepare('select 256'), recent)
    db.close()
  })
})

import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { after, before, describe, it } from 'node:test'
import { createEngine, type Engine } from './support/engine.js'

/**
 * A SQLite file the gateway cannot write (SQLite then opens it read-only without a word): a write was refused with
 * SQLite's own "attempt to write a readonly database" only, which says neither that nothing was written nor what to
 * fix. The file is made immutable (chattr +i: the tests run as root, whom file modes do not stop); where that cannot
 * be done, the test is skipped, saying why.
 */
describe('sql on sqlite: a write to a file the gateway cannot write', () => {
  let engine: Engine
  let file = ''
  let immutable: string | null = null
  before(async () => {
    engine = await createEngine('sqlite')
    // a rollback journal: in WAL mode the write would land in the -wal file, which is not the immutable one
    await engine.exec(`pragma journal_mode = delete; create table t (id text primary key, version integer not null, name text); insert into t values ('a', 1, 'before')`)
    file = engine.url.slice('sqlite:'.length)
    try {
      execFileSync('chattr', ['+i', file], { stdio: 'pipe' })
    } catch (error) {
      immutable = `chattr +i is not available here (${String(error).slice(0, 120)})`
    }
  })
  after(async () => {
    if (immutable === null) execFileSync('chattr', ['-i', file], { stdio: 'pipe' })
    await engine?.drop()
  })

  it('unauthorized (the operation halts), saying nothing was written and the fix', async (t) => {
    if (immutable !== null) return t.skip(immutable)
    const outcome = await engine.connector('t', { id: 'string', version: 'integer', name: 'string' }).write({ id: 'a', expectedVersion: '1', set: { name: 'after' }, precondition: {} })
    assert.equal(outcome.kind, 'unauthorized', JSON.stringify(outcome))
    assert.match('message' in outcome ? outcome.message : '', /readonly database \(SQLITE_READONLY: .*nothing was written; make the file and its folder writable/)
    assert.deepEqual(await engine.rows(`select version, name from t`), [{ version: 1, name: 'before' }])
  })
})

import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { readFileSync, renameSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import BetterSqlite3 from 'better-sqlite3'
import { createStore } from '../../src/store/index.js'
import { createTempDir } from '../support/stores.js'
import { caller } from '../operations/support/flow.js'
import { startServedOperation, type ServedOperation } from '../operations/support/served-operation.js'

/**
 * The SQLite store file removed, or replaced by another store (a backup restored with `mv`), under a running
 * `warrant serve`. Its handle kept the old inode (WAL mode goes on writing it): operations went on writing the
 * upstream and "succeeding" into a file nobody will read again, the audit chain forked there, and /health
 * answered ok. The store now compares the path's device and inode with the file it opened (before each
 * statement outside a transaction, before and after each COMMIT): once they differ, every statement is refused
 * (`store_unavailable`, 503, naming the path), /health says so, the executor cannot commit the next `in_flight`
 * mark and so sends no further upstream write, and the store is never reopened on whatever file is there now.
 */

const TARGETS = 200
const CONCURRENCY = 4

function storePath(served: ServedOperation): string {
  return served.storeUrl.slice('sqlite:'.length)
}

/** Resolves once the upstream has received no write for `quietMs`. */
async function writesSettled(served: ServedOperation, quietMs = 600): Promise<number> {
  let last = served.upstream.totalWrites()
  for (;;) {
    await new Promise((r) => setTimeout(r, quietMs))
    const now = served.upstream.totalWrites()
    if (now === last) return now
    last = now
  }
}

/**
 * The bytes of a file. (Not read through SQLite: a store file moved in next to the running gateway's WAL file is
 * paired with that WAL by any connection that opens it, and reads as corrupt; see the report in SAFETY.md.)
 */
function digestOfFile(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex')
}

async function assertStoreRefused(served: ServedOperation, base: string, path: string, how: 'removed' | 'replaced'): Promise<void> {
  const health = await fetch(`${base}/health`)
  const healthBody = (await health.json()) as any
  assert.equal(health.status, 503, JSON.stringify(healthBody))
  assert.equal(healthBody.status, 'unavailable')
  assert.equal(healthBody.error.code, 'store_unavailable')
  assert.match(healthBody.error.message, new RegExp(`${path.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}.*${how}`))
  assert.match(healthBody.error.message, /restart the gateway/i)

  const agent = caller(base, served.agentToken)
  // a POST that writes (a selection) is refused, whatever the file at the path now holds
  const post = await agent('POST', '/v1/resources/users/selections', { filter: { status: 'active' } })
  assert.equal(post.status, 503, JSON.stringify(post.body))
  assert.equal(post.body.error.code, 'store_unavailable')
  // nothing claims the operation finished (or anything else) from a file no longer there
  const view = await agent('GET', `/v1/operations/${served.operationId}`)
  assert.equal(view.status, 503, JSON.stringify(view.body))
  assert.equal(view.body.error.code, 'store_unavailable')
}

describe('the SQLite store file removed or replaced under a running serve', () => {
  it('removed: /health is 503, writes are refused, the operation sends no further upstream write', { timeout: 120_000 }, async () => {
    const served = await startServedOperation({ kind: 'sqlite', targets: TARGETS, leaseSeconds: 30, writesBefore: 8 })
    try {
      const base = served.base
      const path = storePath(served)
      rmSync(path)
      const atRemoval = served.upstream.totalWrites()
      const settled = await writesSettled(served)
      // at most the windows whose marks had committed to the file before it went (two windows ahead)
      assert.ok(settled - atRemoval <= 2 * CONCURRENCY, `${settled - atRemoval} writes after the store was removed`)
      assert.ok(settled < TARGETS, 'the operation ran to the end on a store no longer there')
      await assertStoreRefused(served, base, path, 'removed')
      await new Promise((r) => setTimeout(r, 1000))
      assert.equal(served.upstream.totalWrites(), settled, 'an upstream write was sent after the store was gone')
    } finally {
      await served.close()
    }
  })

  it('replaced by another store: refused as well, never reopened on the new file, which is left untouched', { timeout: 120_000 }, async () => {
    const served = await startServedOperation({ kind: 'sqlite', targets: TARGETS, leaseSeconds: 30, writesBefore: 8 })
    try {
      const base = served.base
      const path = storePath(served)
      // a backup of this very store (it holds the agent's token): a store silently reopened on it would answer
      const backup = join(path, '..', 'backup.db')
      const source = new BetterSqlite3(path, { readonly: true })
      source.exec(`vacuum into '${backup}'`)
      source.close()
      const backupBytes = digestOfFile(backup)
      renameSync(backup, path)
      const atReplacement = served.upstream.totalWrites()
      const settled = await writesSettled(served)
      assert.ok(settled - atReplacement <= 2 * CONCURRENCY, `${settled - atReplacement} writes after the store was replaced`)
      assert.ok(settled < TARGETS, 'the operation ran to the end on a store no longer there')
      await assertStoreRefused(served, base, path, 'replaced')
      assert.equal(digestOfFile(path), backupBytes, 'the gateway wrote to the file moved in')
    } finally {
      await served.close()
    }
  })
})

describe('the store handle whose file went', () => {
  it('refuses the COMMIT of a transaction begun before the file was removed, and every statement after it', async () => {
    const dir = await createTempDir('warrant-store-gone-')
    const path = join(dir.path, 'warrant.db')
    const store = await createStore({ url: `sqlite:${path}` })
    try {
      assert.equal((await store.migrate()).error, undefined)
      assert.equal(store.unavailable(), null)
      const refused = await store.db
        .transaction()
        .execute(async (trx) => {
          await trx.insertInto('kv').values({ key: 'k', value: 'v' }).execute()
          rmSync(path)
        })
        .then(
          () => null,
          (error: unknown) => error as { code?: string; message?: string },
        )
      assert.equal(refused?.code, 'store_unavailable', String(refused?.message))
      assert.equal(store.sqlite!.inTransaction, false, 'the refused transaction was rolled back')
      assert.equal(store.unavailable()?.code, 'store_unavailable')
      await assert.rejects(store.db.selectFrom('kv').selectAll().execute(), { code: 'store_unavailable' })
      // a new file at the path changes nothing: the store is not reopened there
      const other = await createStore({ url: `sqlite:${path}` })
      await other.migrate()
      await other.close()
      await assert.rejects(store.db.insertInto('kv').values({ key: 'k2', value: 'v' }).execute(), { code: 'store_unavailable' })
    } finally {
      await store.close()
      await dir.drop()
    }
  })

  it('an in-memory store has no file to lose', async () => {
    const store = await createStore({ url: 'sqlite::memory:' })
    try {
      await store.migrate()
      assert.equal(store.unavailable(), null)
    } finally {
      await store.close()
    }
  })
})

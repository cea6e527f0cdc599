import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import BetterSqlite3 from 'better-sqlite3'
import pg from 'pg'
import { createStore } from '../../src/store/index.js'
import { createCliWorkspace } from '../support/cli-config.js'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { createTestPostgresDatabase, STORE_KINDS, type TestDatabase } from '../support/stores.js'
import { selectProposeApprove, waitForOperation } from './support/flow.js'

const CONCURRENT = 20

/**
 * Blocks writes to the store from other processes: on PostgreSQL, inserts into `plans` (LOCK TABLE … EXCLUSIVE:
 * reads go on); on SQLite, every write (the database's write lock, BEGIN IMMEDIATE). `releaseWhenWaiting(n)`
 * lets go once n other sessions wait on a lock (PostgreSQL), or after 3 s on SQLite, which cannot say who
 * waits (its busy timeout is 5 s). On PostgreSQL both processes are then past their look-up for an open
 * compensation, so without the lock both insert a plan (this test fails). On SQLite the first released
 * process usually keeps the write lock between its statements until it is done (the other's busy handler
 * backs off), so the race is rare there and the test rarely fails without the lock; the in-process test above
 * is the SQLite proof.
 */
async function holdWrites(target: { readonly url: string } | { readonly file: string }): Promise<{ releaseWhenWaiting(n: number): Promise<void> }> {
  if ('file' in target) {
    const sqlite = new BetterSqlite3(target.file)
    sqlite.exec('begin immediate')
    return {
      async releaseWhenWaiting() {
        await new Promise((r) => setTimeout(r, 3000))
        sqlite.exec('commit')
        sqlite.close()
      },
    }
  }
  const client = new pg.Client({ connectionString: target.url })
  await client.connect()
  await client.query('begin')
  await client.query('lock table plans in exclusive mode')
  return {
    async releaseWhenWaiting(n) {
      const deadline = Date.now() + 60_000
      for (;;) {
        const { rows } = await client.query(`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`)
        if (rows[0].n >= n || Date.now() > deadline) break
        await new Promise((r) => setTimeout(r, 50))
      }
      await client.query('commit')
      await client.end()
    },
  }
}

/** Plans compensating the operation, and the selections frozen for them (a lost race must leave none behind). */
async function compensationObjects(db: GatewayFixture['gateway']['store']['db'], operationId: string): Promise<{ plans: string[]; selections: string[] }> {
  const plans = await db.selectFrom('plans').select('id').where('compensates', '=', operationId).execute()
  const selections = await db.selectFrom('selections').select(['id', 'origin']).execute()
  return {
    plans: plans.map((p) => p.id),
    selections: selections.filter((s) => s.origin !== null && JSON.parse(s.origin).operation_id === operationId).map((s) => s.id),
  }
}

/**
 * `POST /v1/operations/{id}/compensation` is one object per operation and restored values: asked twice it is the
 * same plan (201, then 200); asked 20 times at once (before any answer) it is still one plan and one selection.
 * Without the per-operation lock around "look for an open compensation, else create one", every concurrent
 * request passes the look-up before any insert and creates its own selection and plan.
 */
for (const kind of STORE_KINDS) {
  describe(`compensation is created once (${kind} store)`, () => {
    let fx: GatewayFixture
    const committed = async (name: string, region: string): Promise<string> => {
      const agent = fx.as('agent')
      const { plan } = await selectProposeApprove(agent, [fx.as('reviewer'), fx.as('reviewer2')], 'subscriptions', { filter: { status: 'past_due', collection: 'active', region } }, { type: 'pause_collection', params: { reason: name } })
      const commit = await agent('POST', `/v1/plans/${plan.plan_id}/commit`, { expected_digest: plan.plan_digest }, { 'idempotency-key': `${name}-${kind}` })
      assert.equal(commit.status, 202, JSON.stringify(commit.body))
      assert.equal((await waitForOperation(agent, commit.body.operation_id)).state, 'succeeded')
      return commit.body.operation_id
    }
    before(async () => {
      fx = await startDemoGateway({ store: kind, count: 400 })
    })
    after(async () => {
      await fx?.close()
    })

    test('asked twice: the same plan, created once', async () => {
      const operationId = await committed('twice', 'us')
      const first = await fx.as('agent')('POST', `/v1/operations/${operationId}/compensation`)
      assert.equal(first.status, 201, JSON.stringify(first.body))
      const again = await fx.as('agent')('POST', `/v1/operations/${operationId}/compensation`)
      assert.equal(again.status, 200, JSON.stringify(again.body))
      assert.equal(again.body.plan_id, first.body.plan_id)
      assert.deepEqual(await compensationObjects(fx.gateway.store.db, operationId), { plans: [first.body.plan_id], selections: [first.body.selection_id] })
    })

    test(`asked ${CONCURRENT} times at once: one plan, one selection, one 201`, async () => {
      const operationId = await committed('at-once', 'eu')
      const answers = await Promise.all(Array.from({ length: CONCURRENT }, () => fx.as('agent')('POST', `/v1/operations/${operationId}/compensation`)))
      for (const a of answers) assert.ok(a.status === 201 || a.status === 200, JSON.stringify(a.body))
      const ids = new Set(answers.map((a) => a.body.plan_id))
      assert.equal(ids.size, 1, `${ids.size} plans: ${[...ids].join(', ')}`)
      assert.equal(answers.filter((a) => a.status === 201).length, 1)
      const objects = await compensationObjects(fx.gateway.store.db, operationId)
      assert.deepEqual(objects, { plans: [...ids], selections: [answers[0]!.body.selection_id] })
    })
  })

  describe(`warrant compensate twice at the same instant creates one plan (${kind} store, real subprocesses)`, () => {
    let ws: Awaited<ReturnType<typeof createCliWorkspace>>
    let db: TestDatabase | null = null
    before(async () => {
      db = kind === 'postgres' ? await createTestPostgresDatabase() : null
      ws = await createCliWorkspace({ count: 600, edit: (raw) => void (db ? (raw.store = db.url) : undefined) })
    })
    after(async () => {
      await ws?.drop()
      await db?.drop()
    })

    // Nine CLI processes in sequence, each starting tsx: 113 s of a 120 s guard was seen on a loaded machine.
    // The timeout only guards against a hang (the lock is released after 60 s at most), so it is generous.
    test('two processes, one plan and one selection', { timeout: 300_000 }, async () => {
      const reviewer = JSON.parse((await ws.warrant(['token', 'create', '--role', 'reviewer', '--name', 'rita', '--json'])).stdout).token as string
      const selection = JSON.parse((await ws.warrant(['select', 'subscriptions', '-f', 'status=past_due', '-f', 'region=eu', '-f', 'collection=active', '--json', '-q'])).stdout)
      const plan = JSON.parse((await ws.warrant(['plan', selection.selection_id, '--action', 'pause_collection', '--param', 'reason=cli-race', '--json'])).stdout)
      assert.equal((await ws.warrant(['approve', plan.plan_id, '--digest', plan.plan_digest, '--token', reviewer])).code, 0)
      const commit = await ws.warrant(['commit', plan.plan_id, '--digest', plan.plan_digest, '--key', 'cli-race', '--wait', '-q'])
      assert.equal(commit.code, 0, commit.stderr)
      const operationId = /operation (op_\S+?),/.exec(commit.stdout)![1]!

      // Both processes are held at the store until both are waiting, then released together, so their
      // look-ups for an open compensation overlap (otherwise one usually finishes before the other starts).
      const hold = await holdWrites(db ? { url: db.url } : { file: `${ws.dir}/warrant.db` })
      const both = Promise.all([ws.warrant(['compensate', operationId, '--json']), ws.warrant(['compensate', operationId, '--json'])])
      await hold.releaseWhenWaiting(2)
      const [a, b] = await both
      assert.equal(a.code, 0, a.stderr)
      assert.equal(b.code, 0, b.stderr)
      const planA = JSON.parse(a.stdout)
      assert.equal(JSON.parse(b.stdout).plan_id, planA.plan_id)
      const store = await createStore({ url: db ? db.url : `sqlite:${ws.dir}/warrant.db` })
      try {
        assert.deepEqual(await compensationObjects(store.db, operationId), { plans: [planA.plan_id], selections: [planA.selection_id] })
      } finally {
        await store.close()
      }
    })
  })
}

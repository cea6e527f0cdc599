import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import BetterSqlite3 from 'better-sqlite3'
import pg from 'pg'
import { startDemoGateway } from '../support/gateway-fixture.js'
import { STORE_KINDS, type StoreKind } from '../support/stores.js'
import { caller, selectProposeApprove } from './support/flow.js'
import { startUsersUpstream, userIdOf, usersResourceConfig } from './support/users-upstream.js'

/**
 * The executor checked its lease before a target's turn, then re-read the record (up to the upstream's timeout_ms)
 * and wrote it, with no second look at the lease: a write could leave after the lease had ended and another instance
 * had taken the operation over and declared the target `unknown` (an applied write then recorded unknown). Here the
 * re-read before the write is held by a real loopback upstream while the store refuses the holder's renewals (another
 * connection holds the operation's row), until the lease has ended and that connection has taken the operation over
 * as another instance's claim would. The write must not be sent.
 */
const ROLE = { type: 'set_role', role: 'viewer' }
const TAKER = 'other-instance@elsewhere'
const INTERRUPTED = 'interrupted: no durable answer'
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Another instance's connection to the store: it locks the operation's row, waits out the lease, then takes it over. */
interface Taker {
  /** whether the target is in flight (its re-read before the write is under way, not the batch's membership read) */
  inFlight(): Promise<boolean>
  /** locks the row (renewals wait or fail), waits until the lease has ended, takes the operation and declares its target unknown */
  takeOver(): Promise<{ leaseEnded: number }>
  close(): Promise<void>
}

async function takerOf(kind: StoreKind, storeUrl: string): Promise<Taker> {
  const hourAhead = () => new Date(Date.now() + 3_600_000).toISOString()
  const waitPast = async (end: number) => {
    while (Date.now() <= end + 150) await sleep(20)
  }
  if (kind === 'postgres') {
    const client = new pg.Client({ connectionString: storeUrl })
    await client.connect()
    return {
      inFlight: async () => (await client.query("select 1 from operation_targets where state = 'in_flight'")).rowCount! > 0,
      async takeOver() {
        await client.query('begin')
        const { rows } = await client.query("select id, lease_expires_at from operations where state = 'running' for update")
        const { id, lease_expires_at: until } = rows[0] as { id: string; lease_expires_at: string }
        const leaseEnded = Date.parse(until)
        await waitPast(leaseEnded)
        await client.query('update operations set lease_owner = $1, lease_expires_at = $2 where id = $3', [TAKER, hourAhead(), id])
        await client.query("update operation_targets set state = 'unknown', reason = $1, unknown_since = $2 where operation_id = $3 and state = 'in_flight'", [INTERRUPTED, new Date().toISOString(), id])
        await client.query('commit')
        return { leaseEnded }
      },
      close: () => client.end(),
    }
  }
  const db = new BetterSqlite3(storeUrl.replace(/^sqlite:/, ''))
  db.pragma('busy_timeout = 0')
  return {
    inFlight: async () => db.prepare("select 1 from operation_targets where state = 'in_flight'").get() !== undefined,
    async takeOver() {
      // the write lock, without blocking this process's event loop (the gateway runs in it)
      for (;;) {
        try {
          db.exec('begin immediate')
          break
        } catch (error) {
          if ((error as { code?: string }).code !== 'SQLITE_BUSY') throw error
          await sleep(5)
        }
      }
      const { id, lease_expires_at: until } = db.prepare("select id, lease_expires_at from operations where state = 'running'").get() as { id: string; lease_expires_at: string }
      const leaseEnded = Date.parse(until)
      await waitPast(leaseEnded)
      db.prepare('update operations set lease_owner = ?, lease_expires_at = ? where id = ?').run(TAKER, hourAhead(), id)
      db.prepare("update operation_targets set state = 'unknown', reason = ?, unknown_since = ? where operation_id = ? and state = 'in_flight'").run(INTERRUPTED, new Date().toISOString(), id)
      db.exec('commit')
      return { leaseEnded }
    },
    close: async () => void db.close(),
  }
}

for (const kind of STORE_KINDS) {
  describe(`a lease that ends while a target is re-read before its write (${kind} store)`, () => {
    test('the write is not sent once the lease has ended: the record is untouched, and the instance that took over holds what it declared', async () => {
      const upstream = await startUsersUpstream(1)
      const fx = await startDemoGateway({
        store: kind,
        count: 50,
        edit: (config) => {
          config.resources.users = usersResourceConfig(upstream.origin)
          // renewed every 200 ms; timeout_ms (5 s) is far longer than the lease
          config.execution = { concurrency: 1, lease_seconds: 0.6 }
          // a renewal refused as busy at once, not after blocking the event loop for the default 5 s
          if (kind === 'sqlite') config.store = { url: config.store, busy_timeout_ms: 20 }
        },
      })
      const taker = await takerOf(kind, fx.storeUrl)
      try {
        const token = (await fx.gateway.principals.issue({ name: 'users-agent', role: 'agent', scopes: { resources: ['users'], actions: ['set_role'] } })).token
        const agent = caller(fx.base, token)
        let takeover: Promise<{ leaseEnded: number }> | null = null
        let answeredAt = 0
        upstream.onRead = async () => {
          if (takeover !== null || !(await taker.inFlight())) return
          takeover = taker.takeOver()
          await takeover
          answeredAt = Date.now()
        }
        let writtenAt: number | null = null
        upstream.onWrite = () => void (writtenAt ??= Date.now())

        const { selection } = await selectProposeApprove(agent, [fx.as('reviewer')], 'users', { filter: { status: 'active' } }, ROLE)
        const commit = await agent('POST', '/v1/resources/users/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action: ROLE }, { 'idempotency-key': `lease-reread-${kind}` })
        assert.equal(commit.status, 202, JSON.stringify(commit.body))
        const deadline = Date.now() + 15_000
        while (answeredAt === 0) {
          assert.ok(Date.now() < deadline, 'the target was never re-read while in flight')
          await sleep(20)
        }
        const { leaseEnded } = await takeover!
        // a write follows its re-read within milliseconds; give it well over that
        while (writtenAt === null && Date.now() < answeredAt + 1_500) await sleep(20)

        assert.equal(
          writtenAt,
          null,
          `the write was sent ${writtenAt === null ? 0 : writtenAt - leaseEnded} ms after the lease ended, to a target another instance had taken over and declared unknown`,
        )
        assert.equal(upstream.totalWrites(), 0)
        assert.deepEqual([upstream.users.get(userIdOf(1))!.role, upstream.users.get(userIdOf(1))!.version], ['member', 1], 'the record is untouched')
        const ledger = await fx.gateway.store.db.selectFrom('operation_targets').select(['state', 'reason']).where('operation_id', '=', commit.body.operation_id).execute()
        assert.deepEqual(ledger, [{ state: 'unknown', reason: INTERRUPTED }], 'what the instance that took over declared, nothing recorded over it')
      } finally {
        await taker.close()
        await fx.close()
        await upstream.close()
      }
    })
  })
}

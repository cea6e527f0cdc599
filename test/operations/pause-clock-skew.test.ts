import assert from 'node:assert/strict'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { parseConfig } from '../../src/config/index.js'
import { createLogger, openGateway, type Gateway } from '../../src/gateway/index.js'
import { createStore } from '../../src/store/index.js'
import { startGatewayOn } from '../support/gateway-fixture.js'
import { createTempDir } from '../support/stores.js'
import { until } from '../support/until.js'
import { selectProposeApprove } from './support/flow.js'
import { startUsersUpstream, usersResourceConfig } from './support/users-upstream.js'

const SKEW_MS = 60 * 60 * 1000
const BOUND_SECONDS = 3

// A Retry-After pause is kept on the operation's row (`paused_until`, on the clock of the executor that took it),
// and an executor resuming the operation waits out the rest. Read by an executor whose clock is behind (another
// instance, a host whose clock was corrected), the rest is the pause plus the skew: an upstream asking for 2 s
// left the operation waiting an hour, past `execution.max_retry_after_seconds` (3), the bound no pause may pass
// (a longer one halts, saying so). The rest a resumed executor waits is held to that bound.
describe('a Retry-After pause resumed by an executor whose clock is behind (sqlite store)', () => {
  test(`waits at most max_retry_after_seconds, not the skew`, { timeout: 60_000 }, async () => {
    const upstream = await startUsersUpstream(3)
    const dir = await createTempDir('warrant-pause-skew-')
    const config = parseConfig(
      {
        store: `sqlite:${join(dir.path, 'warrant.db')}`,
        execution: { concurrency: 1, max_retry_after_seconds: BOUND_SECONDS },
        resources: { users: usersResourceConfig(upstream.origin) },
      },
      'pause skew config',
    )
    const ahead = await startGatewayOn(config, { resources: ['users'], clock: () => new Date(Date.now() + SKEW_MS) })
    let behind: Gateway | null = null
    const store = await createStore({ url: config.store.url })
    try {
      const agent = ahead.as('agent')
      const { selection } = await selectProposeApprove(agent, [ahead.as('reviewer'), ahead.as('reviewer2')], 'users', { filter: { status: 'active' } }, { type: 'set_role', role: 'viewer' })
      upstream.onWrite = (_id, n) => (n === 1 ? { refuse: { status: 429, body: { error: 'slow down' }, headers: { 'retry-after': '2' } } } : undefined)
      const commit = await agent('POST', '/v1/resources/users/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action: { type: 'set_role', role: 'viewer' } }, { 'idempotency-key': 'pause-skew' })
      assert.equal(commit.status, 202, JSON.stringify(commit.body))
      const operationId = commit.body.operation_id as string
      const load = () => store.db.selectFrom('operations').selectAll().where('id', '=', operationId).executeTakeFirstOrThrow()
      await until(async () => (await load()).paused_until !== null, 'the pause on the row')
      // the instance ahead stops during the pause (a deploy): the pause stays on the row for the next executor
      await ahead.close()
      const held = await load()
      assert.notEqual(held.paused_until, null)
      assert.equal(held.lease_owner, null)

      const resumedAt = Date.now()
      behind = await openGateway({ config, log: createLogger({ level: 'silent' }) })
      await until(async () => (await load()).finished_at !== null, 'the operation resumed to its end')
      const row = await load()
      assert.equal(row.state, 'succeeded', JSON.stringify(row))
      assert.ok(Date.now() - resumedAt < (BOUND_SECONDS + 5) * 1000, `resumed after ${Date.now() - resumedAt} ms`)
    } finally {
      await behind?.close()
      await ahead.close().catch(() => undefined)
      await store.close()
      await upstream.close()
      await dir.drop()
    }
  })
})

import assert from 'node:assert/strict'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { parseConfig } from '../../src/config/index.js'
import { createLogger, openGateway, type Gateway } from '../../src/gateway/index.js'
import { createStore } from '../../src/store/index.js'
import { startGatewayOn } from '../support/gateway-fixture.js'
import { createTempDir, createTestPostgresDatabase, STORE_KINDS } from '../support/stores.js'
import { until } from '../support/until.js'
import { selectProposeApprove } from './support/flow.js'
import { startUsersUpstream, usersResourceConfig } from './support/users-upstream.js'

const THRESHOLD = 5
const BEFORE_STOP = 3

// halt_after_consecutive_errors counts targets in a row that ended failed or unknown. An executor that stops
// mid-operation (a deploy's SIGTERM, a lease taken over) and is resumed by another started its streak at 0: the
// validation failures recorded so far were counted again (countValidationFailures), the streak was not. With a
// threshold of 5, an upstream resetting every write got 3 writes before the stop and 5 more after it: 8 writes in
// a row without an answer, where the operator configured the operation to halt after 5.
for (const kind of STORE_KINDS) {
  describe(`the consecutive-error streak across an executor restart (${kind} store)`, () => {
    test(`an operation resumed after ${BEFORE_STOP} errors in a row halts after ${THRESHOLD - BEFORE_STOP} more`, { timeout: 120_000 }, async () => {
      const upstream = await startUsersUpstream(20)
      const dir = await createTempDir('warrant-streak-')
      const pg = kind === 'postgres' ? await createTestPostgresDatabase() : null
      const config = parseConfig(
        {
          store: pg ? pg.url : `sqlite:${join(dir.path, 'warrant.db')}`,
          execution: { concurrency: 1, halt_after_consecutive_errors: THRESHOLD },
          resources: { users: usersResourceConfig(upstream.origin) },
        },
        'streak test config',
      )
      let second: Gateway | null = null
      const first = await startGatewayOn(config, { resources: ['users'] })
      try {
        const agent = first.as('agent')
        const { selection } = await selectProposeApprove(agent, [first.as('reviewer'), first.as('reviewer2')], 'users', { filter: { status: 'active' } }, { type: 'set_role', role: 'viewer' })
        // every write is received whole, then its connection reset: no answer, each target `unknown`
        let stopping: Promise<void> | null = null
        upstream.onWrite = (_id, n) => {
          // the executor stops during its third write: that write is answered (reset) and recorded, the rest stay pending
          if (n === BEFORE_STOP) stopping = first.gateway.close()
          return { reset: true }
        }
        const commit = await agent('POST', '/v1/resources/users/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action: { type: 'set_role', role: 'viewer' } }, { 'idempotency-key': `streak-${kind}` })
        assert.equal(commit.status, 202, JSON.stringify(commit.body))
        const operationId = commit.body.operation_id as string
        await until(() => stopping !== null, 'the third write')
        await stopping
        assert.equal(upstream.totalWrites(), BEFORE_STOP, 'the first executor stopped after its third write')

        // another process on the same store: it resumes the operation at open
        second = await openGateway({ config, log: createLogger({ level: 'silent' }) })
        const store = await createStore({ url: config.store.url })
        try {
          const load = () => store.db.selectFrom('operations').selectAll().where('id', '=', operationId).executeTakeFirstOrThrow()
          await until(async () => (await load()).finished_at !== null, 'the resumed operation to end')
          const row = await load()
          assert.equal(row.state, 'halted', JSON.stringify(row))
          assert.equal(JSON.parse(row.halt_reason!).rule, 'consecutive_errors')
          assert.equal(upstream.totalWrites(), THRESHOLD, `writes without an answer in a row: ${upstream.totalWrites()}, the threshold ${THRESHOLD}`)
          assert.match(JSON.parse(row.halt_reason!).message, new RegExp(`^${THRESHOLD} targets in a row`))
        } finally {
          await store.close()
        }
      } finally {
        await second?.close()
        await first.close().catch(() => undefined)
        await upstream.close()
        await pg?.drop()
        await dir.drop()
      }
    })
  })
}

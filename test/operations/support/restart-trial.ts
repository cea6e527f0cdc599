import assert from 'node:assert/strict'
import { join } from 'node:path'
import { parseConfig } from '../../../src/config/index.js'
import { createLogger, openGateway, type Gateway } from '../../../src/gateway/index.js'
import { createStore, type OperationRow } from '../../../src/store/index.js'
import { startGatewayOn } from '../../support/gateway-fixture.js'
import { createTempDir, createTestPostgresDatabase, type StoreKind } from '../../support/stores.js'
import { until } from '../../support/until.js'
import { selectProposeApprove } from './flow.js'
import { startUsersUpstream, usersResourceConfig, type UsersUpstream, type WriteDecision } from './users-upstream.js'

export interface RestartTrial {
  /** the operation's row once the second gateway ended it */
  readonly row: OperationRow
  readonly upstream: UsersUpstream
}

/**
 * An operation committed on one gateway, stopped (closed, as a deploy's SIGTERM closes it) during its `stopAt`th
 * write, and resumed by a second gateway opened on the same store: `check` sees its row once the second ended it.
 * Every write is answered by `answer` (a real loopback upstream of `count` users).
 */
export async function runAcrossRestart(
  kind: StoreKind,
  options: { readonly count: number; readonly execution: Record<string, unknown>; readonly stopAt: number; readonly answer: () => WriteDecision },
  check: (trial: RestartTrial) => void,
): Promise<void> {
  const upstream = await startUsersUpstream(options.count)
  const dir = await createTempDir('warrant-restart-')
  const pg = kind === 'postgres' ? await createTestPostgresDatabase() : null
  const config = parseConfig(
    { store: pg ? pg.url : `sqlite:${join(dir.path, 'warrant.db')}`, execution: options.execution, resources: { users: usersResourceConfig(upstream.origin) } },
    'restart trial config',
  )
  let second: Gateway | null = null
  const first = await startGatewayOn(config, { resources: ['users'] })
  try {
    const agent = first.as('agent')
    const { selection } = await selectProposeApprove(agent, [first.as('reviewer'), first.as('reviewer2')], 'users', { filter: { status: 'active' } }, { type: 'set_role', role: 'viewer' })
    let stopping: Promise<void> | null = null
    upstream.onWrite = (_id, n) => {
      // the first executor stops during this write: it is answered and recorded, the rest stay pending
      if (n === options.stopAt) stopping = first.gateway.close()
      return options.answer()
    }
    const commit = await agent('POST', '/v1/resources/users/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action: { type: 'set_role', role: 'viewer' } }, { 'idempotency-key': `restart-${kind}` })
    assert.equal(commit.status, 202, JSON.stringify(commit.body))
    const operationId = commit.body.operation_id as string
    await until(() => stopping !== null, `write ${options.stopAt}`)
    await stopping
    assert.equal(upstream.totalWrites(), options.stopAt, `the first executor stopped after write ${options.stopAt}`)

    // another process on the same store: it resumes the operation at open
    second = await openGateway({ config, log: createLogger({ level: 'silent' }) })
    const store = await createStore({ url: config.store.url })
    try {
      const load = () => store.db.selectFrom('operations').selectAll().where('id', '=', operationId).executeTakeFirstOrThrow()
      await until(async () => (await load()).finished_at !== null, 'the resumed operation to end')
      check({ row: await load(), upstream })
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
}

import type { ChildProcess } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createTempDir, createTestPostgresDatabase, type StoreKind } from '../../support/stores.js'
import { caller, selectProposeApprove } from './flow.js'
import { issueUsersTokens, startServe, stopServe } from './serve-process.js'
import { startUsersUpstream, usersResourceConfig, type UsersUpstream } from './users-upstream.js'

export interface ServedOperation {
  readonly upstream: UsersUpstream
  readonly storeUrl: string
  readonly configPath: string
  readonly agentToken: string
  readonly operationId: string
  /** the `warrant serve` process running the operation */
  readonly first: ChildProcess
  /** its base URL */
  readonly base: string
  /** another `warrant serve` on the same config and store; stopped with the rest at `close` */
  startAnother(): Promise<{ child: ChildProcess; base: string }>
  close(): Promise<void>
}

/**
 * `set_role viewer` on `targets` users, committed through a real `warrant serve` (store of `kind`), each PATCH
 * answered after 30 ms; resolves once the upstream has received `writesBefore` writes, so the caller can
 * interrupt the process mid-operation.
 */
export async function startServedOperation(options: { readonly kind: StoreKind; readonly targets: number; readonly leaseSeconds: number; readonly writesBefore: number }): Promise<ServedOperation> {
  const upstream = await startUsersUpstream(options.targets)
  upstream.onWrite = () => ({ delayMs: 30 })
  const dir = await createTempDir('warrant-served-op-')
  const pg = options.kind === 'postgres' ? await createTestPostgresDatabase() : null
  const storeUrl = pg ? pg.url : `sqlite:${join(dir.path, 'warrant.db')}`
  const configPath = join(dir.path, 'warrant.json')
  const children: ChildProcess[] = []
  const close = async () => {
    for (const child of children) await stopServe(child, 'SIGTERM')
    await upstream.close()
    await pg?.drop()
    await dir.drop()
  }
  try {
    writeFileSync(
      configPath,
      JSON.stringify({
        store: storeUrl,
        server: { host: '127.0.0.1', port: 0 },
        // no settle window: the tests wait until the upstream has finished every write it received
        execution: { concurrency: 4, batch_size: 20, lease_seconds: options.leaseSeconds, reconcile_settle_seconds: 0 },
        resources: { users: usersResourceConfig(upstream.origin) },
      }),
    )
    // tokens first, in the store every process will use
    const { agentToken, reviewerToken } = await issueUsersTokens(configPath)
    const startAnother = async () => {
      const served = await startServe(configPath)
      children.push(served.child)
      return served
    }
    const first = await startAnother()
    const agent = caller(first.base, agentToken)
    const action = { type: 'set_role', role: 'viewer' }
    const { selection } = await selectProposeApprove(agent, [caller(first.base, reviewerToken)], 'users', { filter: { status: 'active' } }, action)
    if (selection.count !== options.targets) throw new Error(`the selection holds ${selection.count} of ${options.targets} users`)
    const commit = await agent('POST', '/v1/resources/users/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action }, { 'idempotency-key': `served-${options.kind}` })
    if (commit.status !== 202) throw new Error(`the commit answered ${commit.status}: ${JSON.stringify(commit.body)}`)
    while (upstream.totalWrites() < options.writesBefore) await new Promise((r) => setTimeout(r, 5))
    return { upstream, storeUrl, configPath, agentToken, operationId: commit.body.operation_id, first: first.child, base: first.base, startAnother, close }
  } catch (error) {
    await close()
    throw error
  }
}

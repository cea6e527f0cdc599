import { startDemoGateway, type GatewayFixture } from '../../support/gateway-fixture.js'
import type { StoreKind } from '../../support/stores.js'
import { caller, selectProposeApprove, waitForOperation, type Caller } from './flow.js'
import { usersResourceConfig } from './users-upstream.js'
import { startFaultUsers, type FaultUsers } from './fault-users.js'

export interface FaultGateway {
  readonly fx: GatewayFixture
  readonly upstream: FaultUsers
  readonly agent: Caller
  readonly reviewer: Caller
  /** select every active user, propose set_role viewer, approve, commit; returns the operation id */
  commit(key: string): Promise<string>
  finished(id: string): Promise<any>
}

export async function withFaultGateway(
  kind: StoreKind,
  count: number,
  execution: Record<string, unknown>,
  body: (ctx: FaultGateway) => Promise<void>,
  resource: (config: Record<string, any>) => void = () => undefined,
  /** the gateway's clock (see GatewayOptions.clock); real time by default */
  clock?: () => Date,
): Promise<void> {
  const upstream = await startFaultUsers(count)
  let fx: GatewayFixture | undefined
  try {
    fx = await startDemoGateway({
      store: kind,
      count: 50,
      ...(clock ? { clock } : {}),
      edit: (config) => {
        const users = usersResourceConfig(upstream.origin, {}) as Record<string, any>
        resource(users)
        config.resources.users = users
        config.execution = execution
      },
    })
    const token = (await fx.gateway.principals.issue({ name: 'users-agent', role: 'agent', scopes: { resources: ['users'], actions: ['set_role'] } })).token
    const agent = caller(fx.base, token)
    const reviewer = fx.as('reviewer')
    await body({
      fx,
      upstream,
      agent,
      reviewer,
      async commit(key) {
        const { selection } = await selectProposeApprove(agent, [reviewer], 'users', { filter: { status: 'active' } }, { type: 'set_role', role: 'viewer' })
        const res = await agent('POST', '/v1/resources/users/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action: { type: 'set_role', role: 'viewer' } }, { 'idempotency-key': key })
        if (res.status !== 202) throw new Error(JSON.stringify(res.body))
        return res.body.operation_id as string
      },
      finished: (id) => waitForOperation(agent, id, 30_000),
    })
  } finally {
    await fx?.close()
    await upstream.close()
  }
}

import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { versionProofDigest, type VersionProof } from '../../../src/operations/index.js'
import { startDemoGateway, type GatewayFixture } from '../../support/gateway-fixture.js'
import type { StoreKind } from '../../support/stores.js'
import { caller, type Caller } from './flow.js'
import { startUsersUpstream, userIdOf, usersResourceConfig, type UsersUpstream } from './users-upstream.js'

export interface UsersGateway {
  readonly fx: GatewayFixture
  readonly upstream: UsersUpstream
  readonly agent: Caller
  readonly reviewer: Caller
  /** The same config as a file in the gateway's folder, for `warrant … --config` run as a subprocess on the same store. */
  readonly configFile: string
}

/** A demo gateway that also serves a `users` resource over a real loopback REST upstream. */
export async function withUsersGateway(
  kind: StoreKind,
  count: number,
  execution: Record<string, unknown>,
  body: (ctx: UsersGateway) => Promise<void>,
  resource: Parameters<typeof usersResourceConfig>[1] = {},
): Promise<void> {
  const upstream = await startUsersUpstream(count)
  let fx: GatewayFixture | undefined
  let raw: Record<string, unknown> = {}
  try {
    fx = await startDemoGateway({
      store: kind,
      count: 50,
      edit: (config) => {
        config.resources.users = usersResourceConfig(upstream.origin, resource)
        config.execution = execution
        raw = structuredClone(config)
      },
    })
    const configFile = join(fx.dir, 'warrant.json')
    writeFileSync(configFile, JSON.stringify(raw, null, 2))
    const token = (await fx.gateway.principals.issue({ name: 'users-agent', role: 'agent', scopes: { resources: ['users'], actions: ['set_role'] } })).token
    await body({ fx, upstream, agent: caller(fx.base, token), reviewer: fx.as('reviewer'), configFile })
  } finally {
    await fx?.close()
    await upstream.close()
  }
}

/** A write probe of `set_role` that held just now, on the users resource as configured (see version-proof.ts). */
export function usersProof(ctx: UsersGateway, overrides: Partial<VersionProof> = {}): VersionProof {
  const config = ctx.fx.gateway.catalogue.get('users').config
  return {
    resource: 'users',
    action: 'set_role',
    digest: versionProofDigest(config.connector, config.actions.set_role),
    status: 'holds',
    record_id: userIdOf(1),
    probed_at: new Date().toISOString(),
    detail: 'recorded by the test',
    ...overrides,
  }
}

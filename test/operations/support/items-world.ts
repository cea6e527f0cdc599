import assert from 'node:assert/strict'
import { after, before } from 'node:test'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { connectAgent, startMcpWorld, type McpWorld } from '../../mcp/support.js'
import { caller, selectProposeApprove, waitForOperation, type Caller } from './flow.js'
import { itemsResourceConfig, startItemsUpstream } from './things-actions.js'

export interface ItemsWorld {
  readonly up: Awaited<ReturnType<typeof startItemsUpstream>>
  readonly world: McpWorld
  /** An agent scoped to every action of `items`, over HTTP, and its token. */
  readonly agent: Caller
  readonly token: string
  /** The same agent through the official MCP client over /mcp. */
  readonly client: Client
  /** Runs `action` over the open items `ids` to the end (succeeded), committed with `key`: the operation's id. */
  ran(action: string, ids: readonly string[], key: string): Promise<string>
}

/**
 * The items upstream (`startItemsUpstream`: one action per kind of write) behind an MCP world, for the tests of one
 * describe block: started before them, closed after them. Read its members inside a test.
 */
export function itemsMcpWorld(clientName: string, count: number): ItemsWorld {
  const s = {} as { -readonly [K in keyof ItemsWorld]: ItemsWorld[K] }
  before(async () => {
    s.up = await startItemsUpstream(count)
    s.world = await startMcpWorld({ count: 20, edit: (c) => void (c.resources.items = itemsResourceConfig(s.up.origin)) })
    s.token = (await s.world.fx.gateway.principals.issue({ name: 'items-agent', role: 'agent', scopes: { resources: ['items'], actions: '*' } })).token
    s.agent = caller(s.world.fx.base, s.token)
    s.client = await connectAgent({ ...s.world, agentToken: s.token }, clientName)
  })
  after(async () => {
    await s.client?.close()
    await s.world?.close()
    await s.up?.close()
  })
  s.ran = async (action, ids, key) => {
    const { plan } = await selectProposeApprove(s.agent, [s.world.fx.as('reviewer')], 'items', { filter: { id: { in: ids } } }, { type: action })
    const commit = await s.agent('POST', `/v1/plans/${plan.plan_id}/commit`, { expected_digest: plan.plan_digest }, { 'idempotency-key': key })
    assert.equal(commit.status, 202, JSON.stringify(commit.body))
    assert.equal((await waitForOperation(s.agent, commit.body.operation_id)).state, 'succeeded')
    return commit.body.operation_id
  }
  return s
}

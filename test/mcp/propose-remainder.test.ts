import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { selectProposeApprove, waitForOperation } from '../operations/support/flow.js'
import { withUsersGateway } from '../operations/support/users-gateway.js'
import { assertAnswered, assertRefused, callTool, text } from './support.js'

/** propose_remainder: the same answer as POST /v1/operations/{id}/remainder, for an agent over MCP (watched fail first: unknown tool). */
describe('propose_remainder over MCP', () => {
  test("proposes the rest of a halted operation once; a finished one with nothing pending is refused, naming why", () =>
    withUsersGateway('sqlite', 12, { concurrency: 1, batch_size: 10 }, async ({ fx, upstream, agent, reviewer }) => {
      upstream.onWrite = (_id, n) => (n === 3 ? { refuse: { status: 401, body: { error: 'no' } } } : undefined)
      const action = { type: 'set_role', role: 'viewer' }
      const { selection } = await selectProposeApprove(agent, [reviewer], 'users', { filter: { status: 'active' } }, action)
      const commit = await agent('POST', '/v1/resources/users/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action }, { 'idempotency-key': 'mcp-halt' })
      const halted = await waitForOperation(agent, commit.body.operation_id)
      assert.equal(halted.state, 'halted')
      const token = (await fx.gateway.principals.issue({ name: 'mcp-users', role: 'agent', scopes: { resources: ['users'], actions: ['set_role'] } })).token
      const client = new Client({ name: 'remainder', version: '1.0.0' })
      await client.connect(new StreamableHTTPClientTransport(new URL(`${fx.base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }))
      try {
        const plan = assertAnswered(await callTool(client, 'propose_remainder', { operation_id: halted.operation_id }))
        assert.equal(plan.target_count, halted.counts.pending)
        assert.equal(plan.created, true)
        const http = await agent('POST', `/v1/operations/${halted.operation_id}/remainder`)
        assert.equal(http.status, 200)
        assert.equal(http.body.plan_id, plan.plan_id)
        const again = assertAnswered(await callTool(client, 'propose_remainder', { operation_id: halted.operation_id }))
        assert.deepEqual([again.plan_id, again.created], [plan.plan_id, false])
        // get_operation names it, in its result and in its words, so an agent reports it rather than proposing again
        const op = await callTool(client, 'get_operation', { operation_id: halted.operation_id })
        assert.deepEqual(assertAnswered(op).follow_ups.remainder, { plan_id: plan.plan_id, state: 'pending', operation_id: null })
        assert.match(text(op, 0), new RegExp(`its rest is plan ${plan.plan_id} \\(pending\\)`))

        upstream.onWrite = () => undefined
        const all = await selectProposeApprove(agent, [reviewer], 'users', { filter: { status: 'active' } }, action)
        const done = await agent('POST', '/v1/resources/users/bulk-actions', { selection_id: all.selection.selection_id, expected_digest: all.selection.digest, action }, { 'idempotency-key': 'mcp-all' })
        assert.equal((await waitForOperation(agent, done.body.operation_id)).state, 'succeeded')
        const nothing = await callTool(client, 'propose_remainder', { operation_id: done.body.operation_id })
        assertRefused(nothing, 'conflict')
        assert.match(nothing.structuredContent.error.message, /nothing left/)
      } finally {
        await client.close()
      }
    }))
})

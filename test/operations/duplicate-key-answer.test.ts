import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { startDemoGateway } from '../support/gateway-fixture.js'
import { STORE_KINDS } from '../support/stores.js'
import { sendJson, startUpstream } from '../connectors/http/upstream-server.js'
import { allResults, caller, selectProposeApprove, waitForOperation } from './support/flow.js'

/**
 * An upstream answers each PATCH 200 with the record naming `role` twice, the value it holds first and the one
 * asked for last, and does not apply it. JSON.parse keeps the last, so the answer read as the approved effect
 * at a new version, and every target was `succeeded` while the upstream still held `member`. The answer says
 * neither value for sure: the record is re-read, and the re-read contradicts the write.
 */
for (const kind of STORE_KINDS) {
  describe(`a write answered with a key named twice (${kind} store)`, () => {
    test('is judged on the record re-read, never on the last value of the key', async () => {
      const users = new Map([1, 2].map((i) => [`u${i}`, { id: `u${i}`, role: 'member', version: 1 }]))
      const upstream = await startUpstream((req, res) => {
        if (req.method === 'GET' && req.url.pathname === '/users') return sendJson(res, 200, { items: [...users.values()], next_cursor: null })
        const user = users.get(req.url.pathname.slice('/users/'.length))!
        if (req.method === 'GET') return sendJson(res, 200, user)
        const asked = (JSON.parse(req.body) as { role: string }).role
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(`{"id":"${user.id}","role":"${user.role}","version":${user.version + 1},"role":"${asked}"}`)
      })
      const fx = await startDemoGateway({
        store: kind,
        count: 10,
        edit: (config) => {
          config.resources.users = {
            description: 'Users',
            environment: { name: 'users-test', host: upstream.origin },
            connector: {
              kind: 'http',
              sources: [{ name: 'main', base_url: upstream.origin }],
              list: { path: '/users', pagination: { style: 'cursor', param: 'cursor', next_cursor_path: 'next_cursor' }, items_path: 'items' },
              get: { path: '/users/{id}' },
              version: { from: 'field', field: 'version' },
            },
            fields: { id: 'string', role: 'string', version: 'integer' },
            review_fields: ['id', 'role'],
            actions: {
              set_role: {
                description: 'Set the role',
                params: { role: { type: 'string' } },
                set: { role: '{{params.role}}' },
                write: { method: 'PATCH', path: '/users/{id}', body: { role: '{{set.role}}' }, if_match: true },
                expect: { status: [200] },
              },
            },
          }
        },
      })
      try {
        const token = (await fx.gateway.principals.issue({ name: 'users-agent', role: 'agent', scopes: { resources: ['users'], actions: ['set_role'] } })).token
        const agent = caller(fx.base, token)
        const action = { type: 'set_role', role: 'viewer' }
        const { selection } = await selectProposeApprove(agent, [fx.as('reviewer')], 'users', { filter: {} }, action)
        const commit = await agent('POST', '/v1/resources/users/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action }, { 'idempotency-key': `dup-${kind}` })
        assert.equal(commit.status, 202, JSON.stringify(commit.body))
        const operation = await waitForOperation(agent, commit.body.operation_id)
        const results = await allResults(agent, commit.body.operation_id)
        assert.deepEqual(
          results.filter((r) => r.outcome === 'succeeded').map((r) => r.id),
          [],
          'no write the upstream did not apply is succeeded',
        )
        assert.equal(operation.state, 'halted')
        // the record re-read is at the version the write started from: the write proved nothing
        assert.equal(operation.halt_reason.rule, 'effect_unverified', JSON.stringify(operation.halt_reason))
        assert.deepEqual(
          results.map((r) => [r.id, r.outcome, r.reason]),
          results.map((r) => [r.id, 'unknown', 'effect_unverified']),
        )
      } finally {
        await fx.close()
        await upstream.close()
      }
    })
  })
}

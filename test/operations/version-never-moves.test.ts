import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { checkResource } from '../../src/checks/index.js'
import { resourceSchema } from '../../src/config/schema.js'
import { createHttpConnector } from '../../src/connectors/http/index.js'
import { startDemoGateway } from '../support/gateway-fixture.js'
import { allResults, caller, selectProposeApprove, waitForOperation } from './support/flow.js'
import { idOf, startUnmovedUpstream as startUpstream, unmovedUsersResource as resource } from './support/unmoved-upstream.js'

// `connector.version` points at a field the upstream does NOT move on writes (here `rev`, constant per record; the
// same holds for `updated_at` with one-second resolution and two writes in a second), and the upstream enforces
// If-Match against it. If-Match on a version that never moves protects nothing: a change made by someone else
// between Warrant's re-read and its PATCH leaves `rev` as it was, the PATCH passes, the other write is
// overwritten. The target was recorded `succeeded`; a write seen after at the version it started from proves
// nothing now: `unknown` (effect_unverified) and the operation halts (SQL already refused exactly this).
// `warrant check`'s write probe can only see a stale version refused; it says it did not probe the rest.
describe('a version that does not move on writes (real loopback upstream, sqlite store)', () => {
  test('the write probe says it did not probe whether the version moves', async () => {
    const up = await startUpstream(5)
    try {
      const config = resourceSchema.parse(resource(up.origin))
      const report = await checkResource({ name: 'users', config, connector: createHttpConnector({ resource: config }), writeProbeId: idOf(1) })
      const probe = report.guarantees.find((g) => g.name === 'write_probe.set_role')!
      // it cannot, without a real write: it says what it did not probe
      assert.match(probe.detail, /Not probed: that the version moves on every write/)
    } finally {
      await up.close()
    }
  })

  test('a write whose version did not move, over a change made meanwhile, is not recorded succeeded', async () => {
    const up = await startUpstream(5)
    const fx = await startDemoGateway({ store: 'sqlite', count: 50, edit: (raw) => { raw.resources.users = resource(up.origin) } })
    try {
      const token = (await fx.gateway.principals.issue({ name: 'users-agent', role: 'agent', scopes: { resources: ['users'], actions: ['set_role'] } })).token
      const agent = caller(fx.base, token)
      const { selection } = await selectProposeApprove(agent, [fx.as('reviewer')], 'users', { filter: { status: 'active' } }, { type: 'set_role', role: 'viewer' })
      // someone else makes usr_0003 an admin between Warrant's re-read and its PATCH; `rev` stays as it was
      up.hooks.beforeApply = (id) => {
        if (id === idOf(3) && up.users.get(id)!.role === 'member') up.users.set(id, { ...up.users.get(id)!, role: 'admin' })
      }
      const commit = await agent('POST', '/v1/resources/users/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action: { type: 'set_role', role: 'viewer' } }, { 'idempotency-key': 'probe-rev' })
      assert.equal(commit.status, 202, JSON.stringify(commit.body))
      const operation = await waitForOperation(agent, commit.body.operation_id)
      const result = (await allResults(agent, commit.body.operation_id)).find((r) => r.id === idOf(3))
      assert.equal(up.users.get(idOf(3))!.role, 'viewer', 'the admin role set meanwhile was overwritten')
      assert.notEqual(result.outcome, 'succeeded', `target ${idOf(3)}: ${JSON.stringify(result)}; operation ${operation.state}`)
    } finally {
      await fx.close()
      await up.close()
    }
  })
})

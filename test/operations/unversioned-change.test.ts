import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import Database from 'better-sqlite3'
import { startDemoGateway } from '../support/gateway-fixture.js'
import { allResults, caller, selectProposeApprove, waitForOperation } from './support/flow.js'
import { idOf, startUnmovedUpstream, unmovedUsersResource } from './support/unmoved-upstream.js'

/**
 * Another writer changes a field the action sets, between the freeze and the write, and leaves the version as it was
 * (an UPDATE that does not move it, a version the upstream never moves). The version check passed and the write
 * overwrote that writer's value with the approved one, over a "before" no reviewer saw: recorded succeeded (found on
 * a MariaDB walk: `UPDATE … SET note='sneaky', updated_at=updated_at`). The target's frozen values of the fields the
 * write sets are compared with the record re-read at the same version: one held otherwise is skipped, nothing written.
 */
describe('a set field changed behind a version that did not move is not overwritten', () => {
  test('sql (SQLite demo table): pause_reason set by another writer, version kept: skipped, its value kept', async () => {
    const fx = await startDemoGateway({ store: 'sqlite', count: 120 })
    try {
      const agent = caller(fx.base, fx.tokens.agent)
      const action = { type: 'pause_collection', reason: 'dunning' }
      const { selection } = await selectProposeApprove(agent, [fx.as('reviewer')], 'subscriptions', { filter: { status: 'past_due', collection: 'active' } }, action)
      assert.ok(selection.count >= 3, `${selection.count} members`)
      const page = await agent('GET', `/v1/selections/${selection.selection_id}/records?limit=3`)
      const [touched, other] = page.body.records.map((r: { id: string }) => r.id) as string[]
      const upstream = new Database(fx.upstreamUrl.slice('sqlite:'.length))
      try {
        const version = upstream.prepare('select version from subscriptions where id = ?').get(touched) as { version: number }
        upstream.prepare("update subscriptions set pause_reason = 'legal hold: do not touch' where id = ?").run(touched)
        assert.deepEqual(upstream.prepare('select version from subscriptions where id = ?').get(touched), version, 'the version did not move')

        const commit = await agent('POST', '/v1/resources/subscriptions/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action }, { 'idempotency-key': 'unversioned-sql' })
        assert.equal(commit.status, 202, JSON.stringify(commit.body))
        await waitForOperation(agent, commit.body.operation_id)
        const results = await allResults(agent, commit.body.operation_id)
        const result = results.find((r) => r.id === touched)
        assert.equal(result.outcome, "skipped", JSON.stringify(result))
        assert.match(result.error, /"pause_reason" is "legal hold: do not touch", not "[^"]*" as it was at that version/)
        assert.match(result.error, /nothing was written/)
        assert.deepEqual(upstream.prepare('select pause_reason, collection from subscriptions where id = ?').get(touched), { pause_reason: 'legal hold: do not touch', collection: 'active' }, 'the other writer’s value kept')
        assert.equal(results.find((r) => r.id === other).outcome, 'succeeded', 'a record as frozen is written')
      } finally {
        upstream.close()
      }
    } finally {
      await fx.close()
    }
  })

  // the first target: the writes after it are judged unknown (a version that never moves proves nothing, see
  // version-never-moves.test.ts) and halt the operation
  test('http (a version the upstream never moves): role changed before the commit: skipped, not overwritten', async () => {
    const up = await startUnmovedUpstream(5)
    const fx = await startDemoGateway({ store: 'sqlite', count: 50, edit: (raw) => void (raw.resources.users = unmovedUsersResource(up.origin)) })
    try {
      const token = (await fx.gateway.principals.issue({ name: 'users-agent', role: 'agent', scopes: { resources: ['users'], actions: ['set_role'] } })).token
      const agent = caller(fx.base, token)
      const action = { type: 'set_role', role: 'viewer' }
      const { selection } = await selectProposeApprove(agent, [fx.as('reviewer')], 'users', { filter: { status: 'active' } }, action)
      const before = up.users.get(idOf(1))!
      assert.equal(before.role, 'member')
      // made an admin after the freeze: `rev` stays as it was
      up.users.set(idOf(1), { ...before, role: 'admin' })
      const commit = await agent('POST', '/v1/resources/users/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action }, { 'idempotency-key': 'unversioned-http' })
      assert.equal(commit.status, 202, JSON.stringify(commit.body))
      await waitForOperation(agent, commit.body.operation_id)
      const results = await allResults(agent, commit.body.operation_id)
      const result = results.find((r) => r.id === idOf(1))
      assert.equal(result.outcome, 'skipped', JSON.stringify(result))
      assert.match(result.error, /"role" is "admin", not "member"/)
      assert.equal(up.users.get(idOf(1))!.role, 'admin', 'the admin role set meanwhile was kept')
    } finally {
      await fx.close()
      await up.close()
    }
  })
})

import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { call, type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { STORE_KINDS } from '../support/stores.js'
import { selectProposeApprove, waitForOperation } from './support/flow.js'

/**
 * A commit replayed with its Idempotency-Key passes the same scope checks as the commit: once the principal's
 * scope no longer holds the action, or the resource, the replay is refused `forbidden` and never hands back the
 * operation id it named. Both commit forms (a plan's commit, the article's bulk-actions).
 */
for (const kind of STORE_KINDS) {
  describe(`a commit replay after the scope was narrowed is refused (${kind} store)`, () => {
    let fx: GatewayFixture
    let token: string
    let principal: string
    const narrow = (scopes: unknown) => fx.gateway.store.db.updateTable('principals').set({ scopes: JSON.stringify(scopes) }).where('id', '=', principal).execute()
    const as = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => call(fx.base, method, path, body, { authorization: `Bearer ${token}`, ...headers })
    before(async () => {
      fx = await startDemoGateway({ store: kind, count: 300 })
    })
    after(async () => {
      await fx?.close()
    })

    for (const [what, scopes] of [
      ['the action', { resources: ['subscriptions'], actions: ['resume_collection'] }],
      ['the resource', { resources: ['payroll'], actions: '*' }],
    ] as const) {
      for (const form of ['plan commit', 'bulk-actions'] as const) {
        test(`${form}: the scope no longer holding ${what}`, async () => {
          const issued = await fx.gateway.principals.issue({ name: `agent-${form}-${what}`, role: 'agent', scopes: { resources: ['subscriptions'], actions: '*' } })
          token = issued.token
          principal = issued.principal_id
          const region = form === 'plan commit' ? 'us' : 'eu'
          const reason = `replay ${what} ${form}`
          const { selection, plan } = await selectProposeApprove(as, [fx.as('reviewer'), fx.as('reviewer2')], 'subscriptions', { filter: { status: 'past_due', region } }, { type: 'pause_collection', params: { reason } })
          const key = `replay-${kind}-${form}-${what}`
          const send = () =>
            form === 'plan commit'
              ? as('POST', `/v1/plans/${plan.plan_id}/commit`, { expected_digest: plan.plan_digest }, { 'idempotency-key': key })
              : as('POST', '/v1/resources/subscriptions/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action: { type: 'pause_collection', params: { reason } } }, { 'idempotency-key': key })
          const commit = await send()
          assert.equal(commit.status, 202, JSON.stringify(commit.body))
          await waitForOperation(fx.as('agent'), commit.body.operation_id)
          const replay = await send()
          assert.equal(replay.status, 200, 'with the scope unchanged, the replay is the operation')
          assert.equal(replay.body.operation_id, commit.body.operation_id)

          await narrow(scopes)
          const refused = await send()
          assert.equal(refused.status, 403, JSON.stringify(refused.body))
          assert.equal(refused.body.error.code, 'forbidden')
          assert.doesNotMatch(JSON.stringify(refused.body), new RegExp(commit.body.operation_id), 'the refusal never names the operation')
        })
      }
    }
  })
}

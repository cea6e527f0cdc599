import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { WHO_ASKED_LIMIT, createAuditLog, type AuditLog } from '../../src/audit/index.js'
import type { Actor } from '../../src/contract/index.js'
import { STORE_KINDS, createTestStore, type TestStore } from '../support/stores.js'

const actor = (principal: string, role: Actor['role']): Actor => ({ principal, name: `${principal}-name`, role, scopes: { resources: '*', actions: '*' }, surface: 'http' })
const AGENT = actor('prn_agent', 'agent')
const REVIEWER = actor('prn_rev', 'reviewer')
const LATE_ADMIN = actor('prn_late_admin', 'admin')

/**
 * "Who asked?" for an operation summarised only its first WHO_ASKED_LIMIT run-level events: an agent polling
 * `GET /v1/operations/{id}` once a second for a few hours (each poll a run-level row of the operation) pushed
 * everyone who acted later out of the answer (an admin who halted it, a second approval of its compensation), and
 * `warrant audit query --operation` printed that shorter list with no word. Requesters and approvals now cover every
 * event; only the `events` list is capped, and `truncated` says so.
 */
for (const kind of STORE_KINDS) {
  describe(`whoAsked past ${WHO_ASKED_LIMIT} events (${kind})`, () => {
    let ts: TestStore
    let audit: AuditLog
    before(async () => {
      ts = await createTestStore(kind)
      audit = createAuditLog({ store: ts.store })
      await audit.record({ actor: AGENT, action: 'POST /v1/plans/{id}/commit', plan_id: 'plan_1', operation_id: 'op_1' })
      // queued together: the append takes them in batches
      await Promise.all(Array.from({ length: WHO_ASKED_LIMIT }, () => audit.record({ actor: AGENT, action: 'GET /v1/operations/{id}', operation_id: 'op_1' })))
      await audit.record({ actor: LATE_ADMIN, action: 'POST /v1/operations/{id}/halt', operation_id: 'op_1' })
      await audit.record({ actor: REVIEWER, action: 'POST /v1/plans/{id}/approvals', plan_id: 'plan_1', details: { decision: 'approve', plan_digest: 'sha256:p1' } })
    })
    after(() => ts?.drop())

    test('every requester and approval is listed; only the events are capped, and say so', async () => {
      const answer = await audit.whoAsked('op_1')
      assert.deepEqual(
        answer.requesters.map((r) => r.principal),
        [AGENT.principal, LATE_ADMIN.principal],
      )
      assert.deepEqual(answer.requesters[1]!.actions, ['POST /v1/operations/{id}/halt'])
      assert.deepEqual(
        answer.approvals.map((a) => [a.principal, a.decision]),
        [[REVIEWER.principal, 'approve']],
      )
      assert.equal(answer.events.length, WHO_ASKED_LIMIT)
      assert.equal(answer.truncated, true)
    })
  })
}

import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { createAuditLog } from '../../src/audit/index.js'
import type { Actor } from '../../src/contract/index.js'
import { STORE_KINDS, createTestStore } from '../support/stores.js'
import { silent } from '../support/tampered-chain.js'

const AGENT: Actor = { principal: 'prn_agent', name: 'agent', role: 'agent', scopes: { resources: '*', actions: '*' }, surface: 'http' }

/**
 * "Who asked" (`warrant audit query --operation`) and the listing's `refused_claim` judged a row refused by its summary
 * alone (`isRefusal`: a status of 400 or more, or any `error` member). Call rows were kept out of both (the listing by
 * its level, who asked by reading run rows only), but the gateway's own run rows were not: a webhook delivery's row
 * holds the receiver's status and an `error` member (null when delivered), so who asked dropped the plan it named and
 * the listing called it a refused claim, where it is the gateway's own record of what a receiver answered, as an
 * upstream's 4xx is. Only a request (a run row of a surface a caller uses) can be a refused claim.
 */
for (const kind of STORE_KINDS)
  describe(`the gateway's own rows are never refused claims (${kind})`, () => {
    test("who asked keeps the plan a webhook delivery's row names; the listing marks neither it nor a call's 429 refused", async () => {
      const ts = await createTestStore(kind)
      try {
        const audit = createAuditLog({ store: ts.store, log: silent })
        const delivery = (status: number | null, outcome: string, error: string | null) =>
          audit.record({ actor: null, surface: 'system', action: 'webhook.delivery', plan_id: 'plan_1', operation_id: 'op_1', summary: { delivery_id: 'dlv_1', webhook: 'ops', event: 'operation.succeeded', attempt: 1, outcome, status, error } })
        await delivery(410, 'failed', 'HTTP 410 from the receiver')
        await delivery(200, 'delivered', null)
        await audit.recordCall({ source: 'users', method: 'PATCH', endpoint: '/users/{id}', targetId: 'u1', status: 429, outcome: 'rate_limited', durationMs: 3, operation_id: 'op_1', plan_id: 'plan_1' })
        await audit.record({ actor: AGENT, action: 'POST /v1/operations/:id/compensation', operation_id: 'op_1', plan_id: 'plan_other', summary: { status: 400, outcome: 'refused', error: 'invalid_request' } })
        await audit.flush()

        const asked = await audit.whoAsked('op_1')
        assert.deepEqual(asked.plan_ids, ['plan_1'], JSON.stringify(asked))
        const listed = await audit.query({ operation_id: 'op_1' })
        assert.deepEqual(
          listed.events.map((e) => [e.action, e.refused_claim]),
          [
            ['webhook.delivery', false],
            ['webhook.delivery', false],
            ['PATCH /users/{id}', false],
            ['POST /v1/operations/:id/compensation', true],
          ],
        )
      } finally {
        await ts.drop()
      }
    })
  })

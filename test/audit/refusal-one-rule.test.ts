import assert from 'node:assert/strict'
import { before, describe, test } from 'node:test'
import fc from 'fast-check'
import type { AuditLog } from '../../src/audit/index.js'
import { isRefusal, isRefusedClaim } from '../../src/audit/entry.js'
import { demoGatewayFor } from '../support/gateway-fixture.js'
import { STORE_KINDS } from '../support/stores.js'

/**
 * Whether a row records a refused request was decided three ways: `isRefusedClaim` (the listing's `refused_claim`,
 * who-asked's plans and approvals), a text search for `"outcome":"refused"` anywhere in the summary (who-asked's
 * plan and selection ids, in SQL) and the review pages' recorder's own test. They disagreed on a row the HTTP trail
 * writes: a request accepted (201) whose body holds `{"outcome":"refused"}` (a filter on a field named `outcome`, an
 * action parameter so named) was no refusal to the listing but a refusal to the id query, so who-asked listed its plan
 * and left out that plan's approvals. One rule now decides (isRefusedClaim), here over every row shape the writers make.
 */

/** Nested JSON whose keys are the ones the rules look at, so a body or arguments may hold them at any depth. */
const nested = fc.object({ key: fc.constantFrom('outcome', 'error', 'status', 'plan_id', 'x'), values: [fc.constantFrom('refused', 'ok', null), fc.integer({ min: 0, max: 999 })], maxDepth: 3, maxKeys: 4 })
const code = fc.constantFrom('invalid_request', 'forbidden', 'not_found', 'internal', 'http_418')

/** The summaries each writer makes (src/api/audit-trail.ts, src/mcp/audit.ts, src/cli/cli-audit.ts, the review pages, the notifier, the executor). */
const shapes = fc.oneof(
  fc.record({ status: fc.integer({ min: 100, max: 599 }), body: fc.option(nested, { nil: undefined }), end: fc.constantFrom('ok', 'client_closed', 'failed'), code }).map(({ status, body, end, code }) => ({
    surface: 'http',
    summary: { status, path: '/v1/x', outcome: status >= 400 ? 'refused' : end, ...(status >= 400 ? { error: code } : {}), ...(body === undefined ? {} : { body }) },
  })),
  fc.record({ args: nested, refused: fc.boolean(), code }).map(({ args, refused, code }) => ({ surface: 'mcp', summary: { arguments: args, ...(refused ? { outcome: 'refused', error: code } : { outcome: 'ok' }) } })),
  fc.record({ options: nested, end: fc.constantFrom('ok', 'interrupted', 'refused'), code }).map(({ options, end, code }) => ({ surface: 'cli', summary: { args: ['op_x'], options, outcome: end, ...(end === 'refused' ? { error: code } : {}) } })),
  fc.record({ status: fc.option(fc.integer({ min: 100, max: 599 }), { nil: undefined }), error: fc.option(code, { nil: undefined }), extra: nested }).map(({ status, error, extra }) => {
    const summary = { ...extra, ...(status === undefined ? {} : { status }), ...(error === undefined ? {} : { error }) }
    return { surface: 'ui', summary: { ...summary, outcome: isRefusal(summary) ? 'refused' : ((summary as Record<string, unknown>).outcome ?? 'ok') } }
  }),
  fc.record({ outcome: fc.constantFrom('delivered', 'retrying', 'failed', 'interrupted', 'taken_over'), status: fc.option(fc.integer({ min: 100, max: 599 })), error: fc.option(fc.string()) }).map((s) => ({ surface: 'system', summary: { delivery_id: 'dlv_1', webhook: 'ops', event: 'plan.proposed', attempt: 1, ...s } })),
  nested.map((extra) => ({ surface: 'system', summary: { ...extra, instance: 'gw_1' } })),
)

for (const kind of STORE_KINDS) {
  describe(`one rule says which rows are refused claims (${kind})`, () => {
    const env = demoGatewayFor({ store: kind, count: 5 })
    let audit: AuditLog
    before(() => {
      audit = env.fx.gateway.audit
    })

    test('who asked: a plan a row of the operation names is linked exactly when that row is no refused claim, with its approvals', async () => {
      let n = 0
      await fc.assert(
        fc.asyncProperty(shapes, async ({ surface, summary }) => {
          n++
          const [op, plan] = [`op_p${n}`, `plan_p${n}`]
          await audit.record({ actor: null, surface: surface as 'http', action: 'POST /v1/x', operation_id: op, plan_id: plan, summary })
          await audit.record({ actor: null, action: 'POST /v1/plans/:id/approvals', plan_id: plan, summary: { status: 201, outcome: 'ok' }, details: { decision: 'approve' } })
          await audit.flush()
          const claim = isRefusedClaim({ level: 'run', surface, summary: JSON.parse(JSON.stringify(summary)) })
          const answer = await audit.whoAsked(op)
          assert.deepEqual(answer.plan_ids, claim ? [] : [plan], JSON.stringify(summary))
          assert.deepEqual(answer.approvals.map((a) => a.plan_id), claim ? [] : [plan], JSON.stringify(summary))
        }),
        { numRuns: 150 },
      )
    })

    // the fourth reader, `isSuccessfulRead` (src/audit/reads.ts), is a text test in SQL too: it may show a read it
    // could have left out (a body holding `"error":`), never leave out a refused request
    test('a listing without reads leaves out no refused claim: a read it leaves out is one the rule says is no refusal', async () => {
      let leftOut = 0
      const actions = fc.constantFrom('GET /v1/operations/:id', 'HEAD /v1/plans/:id', 'mcp:get_plan', 'cli:operation show')
      await fc.assert(
        fc.asyncProperty(shapes, actions, async ({ surface, summary }, action) => {
          const row = await audit.record({ actor: null, surface: surface as 'http', action, operation_id: 'op_reads', summary })
          await audit.flush()
          const listed = await audit.query({ operation_id: 'op_reads', after_seq: row.seq - 1, without_reads: true, limit: 10 })
          const kept = listed.events.some((e) => e.seq === row.seq)
          if (isRefusedClaim({ level: 'run', surface, summary: JSON.parse(JSON.stringify(summary)) })) assert.ok(kept, JSON.stringify(summary))
          if (!kept) assert.equal(listed.reads_left_out?.count, 1)
          if (!kept) leftOut++
        }),
        { numRuns: 150 },
      )
      assert.ok(leftOut > 0, 'some reads were left out')
    })

    test('the HTTP trail: an accepted request whose body says "outcome":"refused" links its plan and its approval', async () => {
      const summary = { status: 201, path: '/v1/x', outcome: 'ok', body: { filter: { outcome: 'refused' } } }
      await audit.record({ actor: null, action: 'POST /v1/x', operation_id: 'op_nested', plan_id: 'plan_nested', summary })
      await audit.record({ actor: null, action: 'POST /v1/plans/:id/approvals', plan_id: 'plan_nested', summary: { status: 201, outcome: 'ok' }, details: { decision: 'approve' } })
      await audit.flush()
      const answer = await audit.whoAsked('op_nested')
      assert.deepEqual(answer.plan_ids, ['plan_nested'])
      assert.deepEqual(answer.approvals.map((a) => a.plan_id), ['plan_nested'])
    })
  })
}

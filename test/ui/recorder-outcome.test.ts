import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import fc from 'fast-check'
import { isRefusal } from '../../src/audit/index.js'
import { uiAuditRecorder } from '../../src/ui/routes/context.js'
import { demoGatewayFor } from '../support/gateway-fixture.js'

/**
 * The review pages' recorder writes the row's `outcome` from the one rule (`isRefusal`), and that computed outcome
 * always wins: a caller's summary holding its own `outcome` key (`ok` beside a 403, a number) cannot override it.
 * Before: `{ outcome, ...summary }` let the summary's key win, so a row could say `outcome: ok` and `status: 403`.
 */
describe('review pages recorder: the computed outcome wins over a summary key', () => {
  const env = demoGatewayFor({ store: 'sqlite', count: 5 })

  const recordAndRead = async (summary: Record<string, unknown>) => {
    await uiAuditRecorder(env.fx.gateway)(null, 'POST /review/probe', { summary })
    await env.fx.gateway.audit.flush()
    const row = await env.fx.gateway.store.db.selectFrom('audit_events').select('summary').where('action', '=', 'POST /review/probe').orderBy('seq', 'desc').limit(1).executeTakeFirstOrThrow()
    return JSON.parse(row.summary) as Record<string, unknown>
  }

  test('outcome "ok" beside a 403 is recorded refused', async () => {
    const row = await recordAndRead({ outcome: 'ok', status: 403, error: 'forbidden' })
    assert.equal(row.outcome, 'refused', JSON.stringify(row))
    assert.equal(row.status, 403)
  })

  test('any summary: the row says refused exactly when the rule says so', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({ outcome: fc.option(fc.constantFrom('ok', 'refused', 'failed', 7), { nil: undefined }), status: fc.option(fc.integer({ min: 100, max: 599 }), { nil: undefined }), error: fc.option(fc.constantFrom('forbidden', 'not_found'), { nil: undefined }) }, { requiredKeys: [] }),
        async (raw) => {
          const summary = Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== undefined))
          const row = await recordAndRead(summary)
          assert.equal(row.outcome, isRefusal(summary) ? 'refused' : 'ok', JSON.stringify({ summary, row }))
        },
      ),
      { numRuns: 60 },
    )
  })
})

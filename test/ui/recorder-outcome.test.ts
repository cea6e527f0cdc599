import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import fc from 'fast-check'
import { isRefusal } from '../../src/audit/index.js'
import { uiAuditRecorder } from '../../src/ui/routes/context.js'
import { demoGatewayFor } from '../support/gateway-fixture.js'

/**
 * The review pages' recorder: a request the one rule (`isRefusal`) reads as refused is always recorded `refused`,
 * whatever `outcome` its summary carries; a row that is no refusal keeps its own outcome (an export's `started`,
 * `failed`) and says `ok` without one. Before: `{ outcome, ...summary }` let a summary's `outcome: ok` stand beside a 403.
 */
describe('review pages recorder: a refusal is always recorded refused', () => {
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

  test('a 200 row keeps its own outcome (an export that started, one that failed)', async () => {
    assert.equal((await recordAndRead({ status: 200, outcome: 'started' })).outcome, 'started')
    assert.equal((await recordAndRead({ status: 200, outcome: 'failed' })).outcome, 'failed')
    assert.equal((await recordAndRead({ status: 200 })).outcome, 'ok')
  })

  test('any summary: refused exactly when the rule says so, else its own outcome or ok', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({ outcome: fc.option(fc.constantFrom('ok', 'refused', 'failed', 'started', 7), { nil: undefined }), status: fc.option(fc.integer({ min: 100, max: 599 }), { nil: undefined }), error: fc.option(fc.constantFrom('forbidden', 'not_found'), { nil: undefined }) }, { requiredKeys: [] }),
        async (raw) => {
          const summary = Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== undefined))
          const row = await recordAndRead(summary)
          assert.equal(row.outcome, isRefusal(summary) ? 'refused' : (summary.outcome ?? 'ok'), JSON.stringify({ summary, row }))
          assert.equal(isRefusal(row), isRefusal(summary))
        },
      ),
      { numRuns: 60 },
    )
  })
})

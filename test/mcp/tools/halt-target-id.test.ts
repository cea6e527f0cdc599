import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { operationSummary } from '../../../src/mcp/tools/operations.js'

/**
 * get_operation's sentence named the target an operation halted at bare: an http record whose id is " lead" (a
 * leading space, as an upstream may hold) read "Halted by stop rule effect_contradicted at target  lead: …", an id
 * the agent then repeats to the person as "lead", another record's. The id is quoted, its spaces at either end
 * marked as the review pages mark them ([U+0020]), so the agent relays the id the person will see on the page.
 */
describe('MCP get_operation summary: the halting target id', () => {
  const op = (target_id: string) =>
    ({
      operation_id: 'op_1',
      state: 'halted',
      target_count: 2,
      resource: 'accounts',
      environment: 'acct-staging',
      counts: { pending: 0, in_flight: 0, succeeded: 0, failed: 1, skipped: 1, unknown: 0 },
      halt_reason: { rule: 'effect_contradicted', target_id, ord: 1, message: `target ${JSON.stringify(target_id)}: field "tier" is "t1" where "t2" was approved`, at: '2026-12-07T14:47:00.000Z' },
      paused: null,
      rate_limit_hits: 0,
      rate_limited_targets: 0,
      follow_ups: { remainder: null, compensation: null },
    }) as unknown as Parameters<typeof operationSummary>[0]

  test('an id with a leading or trailing space is quoted, so its spaces show', () => {
    assert.match(operationSummary(op(' lead')), /at target "\[U\+0020\]lead": /)
    assert.match(operationSummary(op('trail ')), /at target "trail\[U\+0020\]": /)
  })

  test('a plain id is quoted the same way', () => {
    assert.match(operationSummary(op('acct/42')), /at target "acct\/42": /)
  })
})

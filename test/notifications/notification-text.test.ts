import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { type NotificationEvent, payloadOf } from '../../src/notifications/index.js'

const PLAN = { plan_id: 'plan_1', resource: 'subscriptions', environment: 'billing-prod', action: 'pause_collection', target_count: 12 }
const decidedBy = (name: string): NotificationEvent => ({ kind: 'plan.decided', plan: PLAN, decision: 'approve', decided_by: name, plan_state: 'approved', still_needed: 0 })
const texts = (event: NotificationEvent) =>
  (['json', 'slack'] as const).map((format) => String(payloadOf(event, { format, deliveryId: 'whd_1', occurredAt: '2030-01-01T00:00:00.000Z', baseUrl: 'https://warrant.example' }).text))

/**
 * The sentence a reviewer reads in chat names who approved: it reads as the review pages show it. "аlice" with a
 * Cyrillic "а" (a name allowed at creation) must not pass for alice, and a name stored before control and bidi
 * characters were refused must not reorder the sentence ("approved by <RLO>ecila" reading "alice").
 */
describe('notification text shows names as the review pages do', () => {
  test('a look-alike letter inside a name shows as its code point, in the json text and the slack text', () => {
    for (const text of texts(decidedBy('\u0430lice'))) {
      assert.ok(text.includes('Approved by [U+0430]lice in billing-prod'), text)
      assert.ok(!text.includes('\u0430'), text)
    }
  })

  test('a bidi override or a newline in an older name shows as its code point', () => {
    for (const text of texts(decidedBy('\u202Eecila\nroot'))) {
      assert.ok(text.includes('Approved by [U+202E]ecila[U+000A]root in billing-prod'), text)
    }
  })

  test('a name wholly in another script reads as written', () => {
    for (const text of texts(decidedBy('Алиса'))) assert.ok(text.includes('Approved by Алиса in billing-prod'), text)
  })
})

/**
 * A receiver that builds its own chat message from the JSON fields ("Approved by {decided_by}") would show the
 * raw name, "аlice" passing for alice. The raw field keeps its meaning (receivers match on it); beside it, the
 * name as the review pages show it, for display.
 */
describe('json payload names: raw for matching, revealed for display', () => {
  const outcome = (event: NotificationEvent) =>
    payloadOf(event, { format: 'json', deliveryId: 'whd_1', occurredAt: '2030-01-01T00:00:00.000Z', baseUrl: 'https://warrant.example' }).outcome as Record<string, unknown>

  test('decided_by stays the name as stored; decided_by_revealed marks the look-alike letter', () => {
    const o = outcome(decidedBy('\u0430lice'))
    assert.equal(o.decided_by, '\u0430lice')
    assert.equal(o.decided_by_revealed, '[U+0430]lice')
  })

  test('proposed_by stays the name as stored; proposed_by_revealed marks a bidi override', () => {
    const o = outcome({ kind: 'plan.awaiting_review', plan: PLAN, reviewers_needed: 1, proposed_by: '\u202Etnega', expires_at: null })
    assert.equal(o.proposed_by, '\u202Etnega')
    assert.equal(o.proposed_by_revealed, '[U+202E]tnega')
  })

  test('a plain name reads the same in both; no name is null in both', () => {
    assert.equal(outcome(decidedBy('alice')).decided_by_revealed, 'alice')
    const o = outcome({ kind: 'plan.awaiting_review', plan: PLAN, reviewers_needed: 1, proposed_by: null, expires_at: null })
    assert.equal(o.proposed_by, null)
    assert.equal(o.proposed_by_revealed, null)
  })
})

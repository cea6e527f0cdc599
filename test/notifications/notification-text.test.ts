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

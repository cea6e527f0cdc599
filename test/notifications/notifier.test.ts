import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { parseConfig } from '../../src/config/index.js'
import { SYSTEM_ACTOR } from '../../src/contract/index.js'
import { createNotifier, observeOperationEnds, payloadOf, signatureOf, verifySignature, type NotificationEvent } from '../../src/notifications/index.js'
import type { PlanService } from '../../src/plans/index.js'
import { STORE_KINDS, createTestStore } from '../support/stores.js'

const PLAN = { plan_id: 'plan_1', resource: 'subscriptions', environment: 'billing-prod (acct 4411)', action: 'pause_collection', target_count: 482 }
const EVENT: NotificationEvent = { kind: 'plan.awaiting_review', plan: PLAN, reviewers_needed: 1, proposed_by: 'ci-agent', expires_at: '2030-01-01T00:00:00.000Z' }
const silent = { warn: () => undefined, error: () => undefined }
const config = (over: Record<string, unknown> = {}) => ({
  webhooks: [{ name: 'hook', url: 'https://hooks.example.com/x', secret: { env: 'HOOK_SECRET' }, format: 'json' as const }],
  retry: { max_attempts: 3, initial_backoff_ms: 10, max_backoff_ms: 20 },
  timeout_ms: 1000,
  ...over,
})
const env = { HOOK_SECRET: 's3cret' }

/** A fetch that answers from a list of statuses (the last one repeats), recording each request. */
function fakeFetch(statuses: number[]) {
  const calls: { url: string; headers: Record<string, string>; body: string }[] = []
  const fn = (async (url: string | URL | Request, init?: RequestInit) => {
    calls.push({ url: String(url), headers: init?.headers as Record<string, string>, body: String(init?.body) })
    return new Response(null, { status: statuses[Math.min(calls.length - 1, statuses.length - 1)] })
  }) as typeof fetch
  return { fn, calls }
}

describe('notification config', () => {
  const base = { resources: {} }
  test('a json webhook needs a secret; the URL must be http(s); events are named', () => {
    assert.throws(() => parseConfig({ ...base, notifications: { webhooks: [{ url: 'https://h.example/x' }] } }), /a json webhook needs a secret/)
    assert.throws(() => parseConfig({ ...base, notifications: { webhooks: [{ url: 'ftp://h.example/x', format: 'slack' }] } }), /http or https/)
    assert.throws(() => parseConfig({ ...base, notifications: { webhooks: [{ url: 'https://h.example/x', format: 'slack', events: ['plan.created'] }] } }), /events/)
    const parsed = parseConfig({ ...base, notifications: { webhooks: [{ url: 'https://hooks.slack.example/T/B/x', format: 'slack' }] } })
    assert.equal(parsed.notifications.retry.max_attempts, 6)
    assert.deepEqual(parseConfig(base).notifications.webhooks, [], 'default: none')
  })
})

describe('notification payloads', () => {
  test('name the environment, the action, the count and the link; a halted operation names its rule only', () => {
    const body = payloadOf(EVENT, { format: 'json', deliveryId: 'whd_1', occurredAt: '2030-01-01T00:00:00.000Z', baseUrl: 'https://warrant.example/' })
    assert.equal(body.plan_url, 'https://warrant.example/review/plans/plan_1')
    assert.equal(body.text, 'Review needed in billing-prod (acct 4411): pause_collection on 482 records of subscriptions; one reviewer must approve. https://warrant.example/review/plans/plan_1')
    const halted = payloadOf(
      { kind: 'operation.halted', plan: PLAN, operation_id: 'op_1', state: 'halted', counts: { succeeded: 300, pending: 182 }, halt_rule: 'effect_contradicted' },
      { format: 'slack', deliveryId: 'whd_2', occurredAt: '2030-01-01T00:00:00.000Z', baseUrl: 'https://warrant.example' },
    )
    assert.equal(
      halted.text,
      'Operation HALTED (effect_contradicted) in billing-prod (acct 4411): pause_collection on 482 records of subscriptions: 300 succeeded, 0 failed, 0 skipped, 0 unknown, 182 pending. <https://warrant.example/review/operations/op_1|Open the operation>',
    )
  })

  test('signatures cover the timestamp and the body, and expire', () => {
    const sig = signatureOf('k', '1700000000', '{"a":1}')
    assert.match(sig, /^sha256=[0-9a-f]{64}$/)
    const now = new Date(1700000000 * 1000)
    assert.ok(verifySignature({ secret: 'k', body: '{"a":1}', timestamp: '1700000000', signature: sig, now }))
    assert.equal(verifySignature({ secret: 'k', body: '{"a":2}', timestamp: '1700000000', signature: sig, now }), false)
    assert.equal(verifySignature({ secret: 'k', body: '{"a":1}', timestamp: '1700000001', signature: sig, now }), false)
    assert.equal(verifySignature({ secret: 'k', body: '{"a":1}', timestamp: '1700000000', signature: sig, now: new Date(1700001000 * 1000) }), false, 'a replay after the tolerance')
  })
})

for (const kind of STORE_KINDS) {
  describe(`webhook deliveries (${kind} store)`, () => {
    test('retried with backoff up to max_attempts, then failed with the last error; one delivery id throughout', async () => {
      const { store, drop } = await createTestStore(kind)
      try {
        const fetch = fakeFetch([503, 502, 500])
        const n = createNotifier({ config: config(), store, log: silent, baseUrl: 'https://w.example', env, fetch: fetch.fn })
        n.emit(EVENT)
        await n.flush()
        assert.equal(fetch.calls.length, 3)
        assert.equal(new Set(fetch.calls.map((c) => c.headers['x-warrant-delivery'])).size, 1)
        const [d] = await n.deliveries({ plan_id: 'plan_1' })
        assert.equal(d!.state, 'failed')
        assert.equal(d!.attempts, 3)
        assert.equal(d!.last_status, 500)
        assert.match(d!.last_error!, /HTTP 500/)
        await n.close()
      } finally {
        await drop()
      }
    })

    test('a delivery a stopped process left pending is resumed by another once its lease has passed, and only once', async () => {
      const { store, drop } = await createTestStore(kind)
      try {
        // First process: the receiver is down, and the process closes while waiting to retry.
        const first = fakeFetch([503])
        const a = createNotifier({ config: config({ retry: { max_attempts: 5, initial_backoff_ms: 60_000, max_backoff_ms: 60_000 } }), store, log: silent, baseUrl: 'https://w.example', env, fetch: first.fn })
        a.emit(EVENT)
        // Until the first attempt is made (up to 30 s on a busy machine); close() then waits for it to be recorded.
        for (let i = 0; i < 3000 && first.calls.length === 0; i++) await new Promise((r) => setTimeout(r, 10))
        await a.close()
        let [d] = await a.deliveries({ plan_id: 'plan_1' })
        assert.equal(d!.state, 'pending')
        assert.equal(d!.attempts, 1)

        const second = fakeFetch([204])
        const b = createNotifier({ config: config(), store, log: silent, baseUrl: 'https://w.example', env, fetch: second.fn })
        await b.resume()
        await b.flush()
        assert.equal(second.calls.length, 0, 'its retry is not due yet (the first process released it to its backoff)')
        // the backoff is over (the due time is `next_attempt_at`; `lease_until` only a holder's claim)
        await store.db.updateTable('webhook_deliveries').set({ next_attempt_at: '2000-01-01T00:00:00.000Z' }).execute()
        await Promise.all([b.resume(), b.resume()])
        await b.flush()
        assert.equal(second.calls.length, 1, 'claimed once')
        assert.equal(second.calls[0]!.body, first.calls[0]!.body, 'the same body, re-signed')
        ;[d] = await b.deliveries({ plan_id: 'plan_1' })
        assert.equal(d!.state, 'delivered')
        assert.equal(d!.attempts, 2)
        await b.close()
      } finally {
        await drop()
      }
    })
  })
}

describe('operation ends', () => {
  test("the executor's halted event becomes a notification naming the rule, not the message", async () => {
    const events: NotificationEvent[] = []
    const recorded: unknown[] = []
    const plans = { load: async () => ({ ...PLAN, action: { type: 'pause_collection', params: { reason: 'secret-ish text' } } }) } as unknown as PlanService
    const recorder = observeOperationEnds({ record: async (e) => recorded.push(e) }, plans, (e) => void Promise.resolve(e).then((built) => built && events.push(built)), silent)
    await recorder.record({
      actor: SYSTEM_ACTOR,
      action: 'operation.halted',
      plan_id: 'plan_1',
      operation_id: 'op_1',
      summary: { state: 'halted', counts: { succeeded: 3, pending: 5 }, halt_reason: { rule: 'authorization_failure', message: 'target sub_104 answered 401' } },
    })
    await recorder.record({ actor: SYSTEM_ACTOR, action: 'operation.recovered', plan_id: 'plan_1', operation_id: 'op_1' })
    for (let i = 0; i < 3000 && events.length === 0; i++) await new Promise((r) => setTimeout(r, 5))
    assert.equal(recorded.length, 2, 'every event still reaches the audit log')
    assert.equal(events.length, 1)
    assert.deepEqual(events[0], { kind: 'operation.halted', plan: PLAN, operation_id: 'op_1', state: 'halted', counts: { succeeded: 3, pending: 5 }, halt_rule: 'authorization_failure' })
    assert.ok(!JSON.stringify(payloadOf(events[0]!, { format: 'json', deliveryId: 'x', occurredAt: 'now', baseUrl: 'https://w' })).includes('sub_104'))
  })
})

import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import BetterSqlite3 from 'better-sqlite3'
import { envelopeSchema } from '../../src/contract/index.js'
import { call, type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { STORE_KINDS } from '../support/stores.js'

function upstreamCount(fixture: GatewayFixture, where: string): number {
  const db = new BetterSqlite3(fixture.upstreamUrl.slice('sqlite:'.length), { readonly: true })
  try {
    return (db.prepare(`select count(*) as n from subscriptions where ${where}`).get() as { n: number }).n
  } finally {
    db.close()
  }
}

for (const kind of STORE_KINDS) {
  describe(`HTTP API on the demo (${kind} store)`, () => {
    let fx: GatewayFixture
    before(async () => {
      fx = await startDemoGateway({ store: kind, count: 3000 })
    })
    after(async () => {
      await fx?.close()
    })

    test('GET /v1/resources names the environment, review fields, denied fields and actions', async () => {
      const { status, body } = await fx.as('agent')('GET', '/v1/resources')
      assert.equal(status, 200)
      const subs = body.resources.find((r: any) => r.name === 'subscriptions')
      assert.equal(subs.environment, 'billing-demo (acct 4411, host demo.sqlite (local))')
      assert.deepEqual(subs.denied_fields, ['card_token', 'notes'])
      assert.ok(subs.review_fields.some((f: any) => f.name === 'status'))
      assert.ok(!subs.review_fields.some((f: any) => f.name === 'card_token'))
      assert.ok(subs.actions.some((a: any) => a.name === 'pause_collection'))
      assert.ok(!JSON.stringify(body).includes('demo.db'), 'no upstream URL leaves the gateway')
    })

    test('a search walks to a complete envelope that matches the upstream exactly', async () => {
      const { status, body } = await fx.as('agent')('POST', '/v1/resources/subscriptions/search', { filter: { status: 'past_due' }, page_size: 100 })
      assert.equal(status, 200)
      envelopeSchema.parse(body)
      assert.equal(body.complete, true)
      assert.equal(body.status, 'complete')
      assert.deepEqual(body.incomplete_reasons, [])
      assert.equal(body.items.length, upstreamCount(fx, "status = 'past_due'"))
      assert.ok(body.items.every((i: any) => i.status === 'past_due'))
      assert.equal(new Set(body.items.map((i: any) => i.id)).size, body.items.length)
      assert.ok(!('card_token' in body.items[0]) && !('notes' in body.items[0]))
      assert.equal(body.scope.consistent_snapshot, true)
    })

    test('max_pages 1 → complete: false with CLIENT_LIMIT_REACHED and a continuation that finishes the same walk', async () => {
      const request = { filter: { region: 'eu' }, page_size: 200, budget: { max_pages: 1 } }
      const first = await fx.as('agent')('POST', '/v1/resources/subscriptions/search', request)
      assert.equal(first.status, 200)
      assert.equal(first.body.complete, false)
      assert.equal(first.body.status, 'partial')
      assert.equal(first.body.truncated, true)
      const reason = first.body.incomplete_reasons.find((r: any) => r.code === 'CLIENT_LIMIT_REACHED')
      assert.deepEqual(reason.limit, { name: 'max_pages', value: 1 })
      assert.equal(first.body.continuation.kind, 'next_cursor')
      const seen = first.body.items.map((i: any) => i.id)
      let cursor = first.body.continuation.cursor
      for (let i = 0; i < 100 && cursor; i++) {
        const next = await fx.as('agent')('POST', '/v1/resources/subscriptions/search', { ...request, cursor, budget: { max_pages: 3 } })
        assert.equal(next.status, 200)
        seen.push(...next.body.items.map((r: any) => r.id))
        cursor = next.body.complete ? null : next.body.continuation?.cursor
        if (next.body.complete) assert.deepEqual(next.body.incomplete_reasons, [])
      }
      assert.equal(cursor, null, 'the walk finished')
      assert.equal(new Set(seen).size, seen.length, 'no record twice')
      assert.equal(seen.length, upstreamCount(fx, "region = 'eu'"))
    })

    test('an empty complete result proves absence; the envelope says so', async () => {
      const { body } = await fx.as('agent')('POST', '/v1/resources/subscriptions/search', { filter: { customer_name: 'No Such Customer' } })
      assert.equal(body.complete, true)
      assert.deepEqual(body.items, [])
    })

    const bad: [string, string, unknown, number, string][] = [
      ['malformed JSON', '/v1/resources/subscriptions/search', '{"filter": ', 400, 'invalid_request'],
      ['unknown resource', '/v1/resources/nope/search', {}, 404, 'not_found'],
      ['a denied field requested', '/v1/resources/subscriptions/search', { fields: ['id', 'card_token'] }, 400, 'denied_field'],
      ['a filter on a denied field', '/v1/resources/subscriptions/search', { filter: { notes: 'x' } }, 400, 'denied_field'],
      ['an unknown field', '/v1/resources/subscriptions/search', { filter: { colour: 'red' } }, 400, 'invalid_request'],
      ['an unknown operator', '/v1/resources/subscriptions/search', { filter: { status: { like: 'past%' } } }, 400, 'invalid_request'],
      ['contains on a non-tags field', '/v1/resources/subscriptions/search', { filter: { status: { contains: 'x' } } }, 400, 'invalid_request'],
      ['a wrong type', '/v1/resources/subscriptions/search', { filter: { amount_due: { gte: 'lots' } } }, 400, 'invalid_request'],
      ['a timestamp that names no instant', '/v1/resources/subscriptions/search', { filter: { updated_at: { lt: 'yesterday' } } }, 400, 'invalid_request'],
      ['a time without a zone', '/v1/resources/subscriptions/search', { filter: { updated_at: { gte: '2024-06-01T12:00:00' } } }, 400, 'invalid_request'],
      ['a forged cursor', '/v1/resources/subscriptions/search', { cursor: 'eyJmb3JnZWQiOnRydWV9.c2ln' }, 400, 'invalid_cursor'],
      ['an unknown body key', '/v1/resources/subscriptions/search', { filtre: {} }, 400, 'invalid_request'],
      ['a negative page size', '/v1/resources/subscriptions/search', { page_size: -1 }, 400, 'invalid_request'],
    ]
    for (const [name, path, body, status, code] of bad) {
      test(`bad input: ${name} → ${status} ${code}`, async () => {
        const res = await fx.as('agent')('POST', path, body)
        assert.equal(res.status, status, JSON.stringify(res.body))
        assert.equal(res.body.error.code, code)
        assert.ok(res.body.error.message.length > 0)
      })
    }

    test('a cursor from another query is refused as invalid_cursor', async () => {
      const first = await fx.as('agent')('POST', '/v1/resources/subscriptions/search', { filter: { region: 'eu' }, budget: { max_pages: 1 } })
      const cursor = first.body.continuation.cursor
      const other = await fx.as('agent')('POST', '/v1/resources/subscriptions/search', { filter: { region: 'us' }, cursor })
      assert.equal(other.status, 400)
      assert.equal(other.body.error.code, 'invalid_cursor')
      const altered = cursor.slice(0, -2) + (cursor.endsWith('A') ? 'BB' : 'AA')
      const tampered = await fx.as('agent')('POST', '/v1/resources/subscriptions/search', { filter: { region: 'eu' }, cursor: altered })
      assert.equal(tampered.status, 400)
      assert.equal(tampered.body.error.code, 'invalid_cursor')
    })

    test('one record: review fields, and every field not returned named with its reason', async () => {
      const res = await fx.as('agent')('GET', '/v1/resources/subscriptions/records/sub_00001?fields=status,region')
      assert.equal(res.status, 200)
      assert.deepEqual(Object.keys(res.body.record).sort(), ['id', 'region', 'status'])
      const warning = res.body.warnings.find((w: any) => w.code === 'PARTIAL_FIELD_SET')
      const reasons = Object.fromEntries(warning.fields.map((f: any) => [f.field, f.reason]))
      assert.equal(reasons.card_token, 'denied')
      assert.equal(reasons.notes, 'denied')
      assert.equal(reasons.customer_name, 'not_requested')
      assert.ok(!JSON.stringify(res.body).includes('tok_'), 'the card token never leaves')
      const missing = await fx.as('agent')('GET', '/v1/resources/subscriptions/records/sub_99999999')
      assert.equal(missing.status, 404)
      assert.equal(missing.body.error.code, 'not_found')
      const denied = await fx.as('agent')('GET', '/v1/resources/subscriptions/records/sub_00001?fields=card_token')
      assert.equal(denied.status, 400)
      assert.equal(denied.body.error.code, 'denied_field')
    })

    test('the OpenAPI 3.1 document describes the routes and the envelope', async () => {
      const res = await fx.as('agent')('GET', '/openapi.json')
      assert.equal(res.status, 200)
      assert.equal(res.body.openapi, '3.1.0')
      assert.ok(res.body.paths['/v1/resources/{resource}/search'].post)
      assert.ok(JSON.stringify(res.body).includes('CLIENT_LIMIT_REACHED'))
      // SHAPE_MISMATCH names the fields and counts the records it could not judge
      const text = JSON.stringify(res.body)
      assert.ok(text.includes('SHAPE_MISMATCH') && text.includes('"record_count"'))
    })

    test('every /v1 call needs a valid token; health and the OpenAPI document do not', async () => {
      const none = await call(fx.base, 'POST', '/v1/resources/subscriptions/search', {})
      assert.equal(none.status, 401)
      assert.equal(none.body.error.code, 'unauthenticated')
      const wrong = await call(fx.base, 'GET', '/v1/resources', undefined, { authorization: 'Bearer wrt_agent_nope' })
      assert.equal(wrong.status, 401)
      assert.equal((await call(fx.base, 'GET', '/health')).status, 200)
      assert.equal((await call(fx.base, 'GET', '/openapi.json')).status, 200)
    })

    test('an agent token outside its resource scope is refused with 403', async () => {
      const { token } = await fx.gateway.principals.issue({ name: 'other-agent', role: 'agent', scopes: { resources: ['invoices'], actions: '*' } })
      const res = await call(fx.base, 'POST', '/v1/resources/subscriptions/search', {}, { authorization: `Bearer ${token}` })
      assert.equal(res.status, 403)
      assert.equal(res.body.error.code, 'forbidden')
      const list = await call(fx.base, 'GET', '/v1/resources', undefined, { authorization: `Bearer ${token}` })
      assert.deepEqual(list.body.resources, [])
    })

    test('every call is in the run-level audit trail, refusals included, and the chain verifies', async () => {
      await fx.as('agent')('POST', '/v1/resources/subscriptions/search', { filter: { status: 'canceled' }, budget: { max_pages: 1 } })
      await call(fx.base, 'GET', '/v1/resources', undefined, { authorization: 'Bearer wrt_agent_wrong' })
      const trail = await fx.as('reviewer')('GET', '/v1/audit?level=run&limit=1000')
      assert.equal(trail.status, 200)
      const searches = trail.body.events.filter((e: any) => e.action === 'POST /v1/resources/:resource/search' && e.principal)
      assert.ok(searches.length > 0)
      const refused = trail.body.events.find((e: any) => e.action === 'GET /v1/resources' && e.principal === null)
      assert.ok(refused, 'a failed authentication is recorded without a principal: ' + JSON.stringify(trail.body.events.slice(-3)))
      assert.ok(!JSON.stringify(trail.body).includes('wrt_agent_wrong'), 'a presented token is never logged')
      const verified = await fx.as('admin')('GET', '/v1/audit/verify')
      assert.equal(verified.body.ok, true)
      const agentReads = await fx.as('agent')('GET', '/v1/audit')
      assert.equal(agentReads.status, 403)
    })
  })
}

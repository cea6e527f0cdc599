import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startDemoGateway, type GatewayFixture } from '../support/gateway-fixture.js'

// A body sent as text/plain, a form, or without a Content-Type was answered "Unsupported Media Type": not which
// header is wrong nor what to send. The answer now names both; the status and code stay 400 invalid_request.
describe('a /v1 body that is not sent as JSON is 400 naming the Content-Type to send', () => {
  let fx: GatewayFixture
  before(async () => {
    fx = await startDemoGateway({ store: 'sqlite', count: 50 })
  })
  after(() => fx?.close())

  test('text/plain, a form and no Content-Type, on a search and a commit; nothing is committed', async () => {
    const cases: [string, string, Record<string, string>][] = [
      ['/v1/resources/subscriptions/search', '{}', { 'content-type': 'text/plain' }],
      ['/v1/resources/subscriptions/search', 'filter=x', { 'content-type': 'application/x-www-form-urlencoded' }],
      ['/v1/plans/plan_x/commit', '{"expected_digest":"sha256:x"}', { 'idempotency-key': 'ct-1' }],
    ]
    for (const [path, body, headers] of cases) {
      const response = await fetch(`${fx.base}${path}`, { method: 'POST', body, headers: { authorization: `Bearer ${fx.tokens.agent}`, ...headers } })
      const answer = (await response.json()) as { error: { code: string; message: string } }
      assert.equal(response.status, 400, path)
      assert.equal(answer.error.code, 'invalid_request')
      assert.match(answer.error.message, /Content-Type: application\/json/, `${path}: ${answer.error.message}`)
    }
    const operations = await fx.gateway.store.db.selectFrom('operations').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()
    assert.equal(Number(operations.n), 0)
  })
})

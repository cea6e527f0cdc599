import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startDemoGateway, type GatewayFixture } from '../support/gateway-fixture.js'

/**
 * The input guard inspects a JSON body (NUL, lone surrogates, __proto__, depth) only when the content type
 * `.includes('json')` (case-sensitive), while the routes' validator parses any `application/json` with /i. Media
 * types are case-insensitive (RFC 9110 §8.3.1): `Content-Type: application/JSON` is parsed as JSON by the route
 * but never inspected by the door.
 */
describe('Content-Type: application/JSON is guarded as application/json is', () => {
  let fx: GatewayFixture
  before(async () => {
    fx = await startDemoGateway({ store: 'sqlite', count: 50 })
  })
  after(() => fx?.close())

  const send = (path: string, body: string, contentType: string) =>
    fetch(`${fx.base}${path}`, { method: 'POST', headers: { authorization: `Bearer ${fx.tokens.agent}`, 'content-type': contentType }, body }).then(async (r) => ({
      status: r.status,
      body: (await r.json()) as any,
    }))
  const selections = async () => (await fx.gateway.store.db.selectFrom('selections').select('id').execute()).length

  for (const contentType of ['application/json', 'application/JSON', 'Application/Json; charset=UTF-8']) {
    test(`${contentType}: a lone surrogate in a filter value is 400 invalid_request, not 500`, async () => {
      const answer = await send('/v1/resources/subscriptions/search', '{"filter":{"status":"\\ud800"}}', contentType)
      assert.equal(answer.status, 400, JSON.stringify(answer.body))
      assert.equal(answer.body.error.code, 'invalid_request')
    })

    test(`${contentType}: a NUL byte in a filter value is refused and no selection is frozen`, async () => {
      const before = await selections()
      const answer = await send('/v1/resources/subscriptions/selections', '{"filter":{"status":"a\\u0000b"}}', contentType)
      assert.equal(answer.status, 400, JSON.stringify(answer.body))
      assert.equal(await selections(), before, 'a refused request changes nothing')
    })
  }
})

import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { demoGatewayFor } from '../support/gateway-fixture.js'
import { withByteFF } from '../support/not-utf8.js'

// A JSON body holding bytes that are not UTF-8 was decoded with each such byte read as U+FFFD: a search for
// "B\uFFFD" answered "complete: 0 items", proving the absence of a name nobody asked about, and a proposal set
// pause_reason to "x\uFFFDy", a value nobody sent, ready for approval. It is refused now, naming where.
describe('a /v1 JSON body that is not UTF-8 is 400 naming where, and changes nothing', () => {
  const env = demoGatewayFor({ store: 'sqlite', count: 50 })

  const post = async (path: string, body: BodyInit) => {
    const response = await fetch(`${env.fx.base}${path}`, { method: 'POST', body, headers: { authorization: `Bearer ${env.fx.tokens.agent}`, 'content-type': 'application/json' } })
    return { status: response.status, body: (await response.json()) as any }
  }

  test('a search whose filter value holds the byte 0xFF is refused naming the value, not answered complete', async () => {
    const answer = await post('/v1/resources/subscriptions/search', withByteFF('{"filter":{"customer_name":"B@"}}'))
    assert.equal(answer.status, 400, JSON.stringify(answer.body))
    assert.equal(answer.body.error.code, 'invalid_request')
    assert.match(answer.body.error.message, /^body\.filter\.customer_name holds bytes that are not UTF-8/)
    assert.equal(answer.body.error.details.field, 'body.filter.customer_name')
  })

  test('a proposal whose param holds such a byte is refused and no plan is stored', async () => {
    const selection = await env.fx.as('agent')('POST', '/v1/resources/subscriptions/selections', { filter: { status: 'past_due', collection: 'active' } })
    assert.equal(selection.status, 201)
    const answer = await post(`/v1/selections/${selection.body.selection_id}/plans`, withByteFF('{"action":{"type":"pause_collection","params":{"reason":"x@y"}}}'))
    assert.equal(answer.status, 400, JSON.stringify(answer.body))
    assert.match(answer.body.error.message, /^body\.action\.params\.reason holds bytes that are not UTF-8/)
    const plans = await env.fx.gateway.store.db.selectFrom('plans').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()
    assert.equal(Number(plans.n), 0)
  })

  test('such a byte outside any string (the JSON is then no JSON) is refused naming the byte offset', async () => {
    const answer = await post('/v1/resources/subscriptions/search', withByteFF('{"filter":{}@}'))
    assert.equal(answer.status, 400)
    assert.equal(answer.body.error.code, 'invalid_request')
    assert.match(answer.body.error.message, /^the request body is not UTF-8 text: byte 12 \(0xff\)/)
  })

  test('valid UTF-8 beyond ASCII, U+FFFD sent as itself included, is taken as sent', async () => {
    const answer = await post('/v1/resources/subscriptions/search', new TextEncoder().encode(JSON.stringify({ filter: { customer_name: 'Bé€𝄞\ufffd' } })))
    assert.equal(answer.status, 200, JSON.stringify(answer.body))
  })
})

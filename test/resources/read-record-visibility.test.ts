import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'

/**
 * A resource whose credential sees only part of it (`visibility.restricted: true`) never answers a search complete:
 * records outside that visibility are neither counted nor named. A read by an id its credential did not find said
 * 404 "no record "sub_…" in subscriptions": absence, which only the whole scope could prove. It now says the record
 * is not among those the credential can see, naming that visibility, and that it may exist outside it.
 */
describe('a read by id on a resource whose credential sees only part of it', () => {
  let fx: GatewayFixture
  before(async () => {
    fx = await startDemoGateway({
      store: 'sqlite',
      count: 10,
      edit: (config) => void (config.resources.subscriptions.visibility = { description: 'subscriptions of the EU tenant only', restricted: true }),
    })
  })
  after(async () => {
    await fx?.close()
  })

  test('an id it does not find is 404 saying it is not visible to it, not that no record has it', async () => {
    const res = await fx.as('agent')('GET', '/v1/resources/subscriptions/records/sub_99999999')
    assert.equal(res.status, 404)
    const body = res.body as { error: { code: string; message: string; details: Record<string, unknown> } }
    assert.equal(body.error.code, 'not_found')
    assert.doesNotMatch(body.error.message, /^no record/)
    assert.match(body.error.message, /subscriptions of the EU tenant only/)
    assert.match(body.error.message, /may exist outside/)
    assert.equal(body.error.details.visibility_restricted, true)
    const found = await fx.as('agent')('GET', '/v1/resources/subscriptions/records/sub_00001')
    assert.equal(found.status, 200)
  })
})

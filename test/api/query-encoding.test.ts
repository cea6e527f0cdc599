import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { demoGatewayFor } from '../support/gateway-fixture.js'

// A query value that is not valid percent-encoded UTF-8 (`%FF`, a Latin-1 `%E9`, a lone `%`) was kept as its
// literal text: `GET /v1/audit?principal=%FF` answered an empty last page of events about a principal "%FF" nobody
// named. It is refused as such a path is: 400 invalid_request naming the parameter.
describe('a query parameter that is not valid percent-encoded UTF-8 is 400 naming it', () => {
  const env = demoGatewayFor({ store: 'sqlite', count: 50 })

  test('its value or its name, on /v1 and /review', async () => {
    const cases: [string, RegExp][] = [
      ['/v1/audit?principal=%FF', /^query parameter "principal" is not valid percent-encoded UTF-8/],
      ['/v1/audit?principal=caf%E9', /^query parameter "principal" is not valid percent-encoded UTF-8/],
      ['/v1/audit?principal=50%', /^query parameter "principal" is not valid percent-encoded UTF-8/],
      ['/v1/audit?%FF=1', /^a query parameter name is not valid percent-encoded UTF-8/],
    ]
    for (const [path, message] of cases) {
      const answer = await env.fx.as('admin')('GET', path)
      assert.equal(answer.status, 400, `${path}: ${JSON.stringify(answer.body)}`)
      assert.equal(answer.body.error.code, 'invalid_request')
      assert.match(answer.body.error.message, message, path)
    }
    const review = await fetch(`${env.fx.base}/review/selections/sel_x/excluded?rule=%FF`)
    assert.equal(review.status, 400)
    // encoded as it should be, a value beyond ASCII reads as sent
    assert.equal((await env.fx.as('admin')('GET', `/v1/audit?principal=${encodeURIComponent('café+x')}`)).status, 200)
  })
})

import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { demoGatewayFor } from '../support/gateway-fixture.js'

// A method a path does not take was answered 404 not_found "no route PUT /v1/resources", as if the path did not
// exist: a client told its URL is wrong looks for another one. It is 405 method_not_allowed now, with the Allow
// header (RFC 9110 says a 405 must carry it) and the methods named; a path no route has stays 404.
describe('a method the path does not take is 405 naming the methods it does', () => {
  const env = demoGatewayFor({ store: 'sqlite', count: 50 })

  test('PUT, DELETE, PATCH and OPTIONS on /v1 paths; an unknown path is still 404', async () => {
    const agent = env.fx.as('agent')
    const cases: [string, string, string][] = [
      ['PUT', '/v1/resources', 'GET, HEAD'],
      ['DELETE', '/v1/plans/plan_x', 'GET, HEAD'],
      ['PATCH', '/v1/resources/subscriptions/search', 'POST'],
      ['GET', '/v1/resources/subscriptions/search', 'POST'],
      ['OPTIONS', '/v1/selections/sel_x/records', 'GET, HEAD'],
    ]
    for (const [method, path, allow] of cases) {
      const answer = await agent(method, path)
      assert.equal(answer.status, 405, `${method} ${path}: ${JSON.stringify(answer.body)}`)
      assert.equal(answer.headers.get('allow'), allow, `${method} ${path}`)
      assert.equal(answer.body.error.code, 'method_not_allowed')
      assert.match(answer.body.error.message, new RegExp(`^${method} is not a method of ${path.replaceAll('/', '\\/')}; it takes ${allow}$`))
    }
    const unknown = await agent('GET', '/v1/nothing/here')
    assert.equal(unknown.status, 404)
    assert.equal(unknown.body.error.code, 'not_found')
  })
})

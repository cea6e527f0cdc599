import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { demoGatewayFor } from '../support/gateway-fixture.js'
import { openReviewSession } from '../support/review-session.js'

// `/review/` (a link typed or pasted with its trailing slash) was "There is no review page at /review/" for a signed-in
// reviewer, and the sign-in form sent one who was not signed in back to that 404. A page address with trailing
// slashes is now a 301 to the same address without them, the query kept, as a relative Location on this host.
describe('a review page address with a trailing slash redirects to the page', () => {
  const env = demoGatewayFor({ store: 'sqlite', count: 50 })

  test('301 to the address without the slash, query kept, signed in or not', async () => {
    const cases: [string, string][] = [
      ['/review/', '/review'],
      ['/review//', '/review'],
      ['/review/?page=2', '/review?page=2'],
      ['/review/sign-in/', '/review/sign-in'],
      ['/review/audit/', '/review/audit'],
    ]
    for (const [from, to] of cases) {
      const response = await fetch(`${env.fx.base}${from}`, { redirect: 'manual' })
      assert.equal(response.status, 301, from)
      assert.equal(response.headers.get('location'), to, from)
    }
    const session = await openReviewSession(env.fx.base, env.fx.tokens.reviewer)
    const slashed = await session.get('/review/')
    assert.equal(slashed.status, 301)
    assert.equal(slashed.location, '/review')
    const queue = await session.get(slashed.location!)
    assert.equal(queue.status, 200)
    assert.doesNotMatch(queue.html, /There is no review page/)
  })

  test('a form posted to a slashed address is not redirected: the body would be lost', async () => {
    const response = await fetch(`${env.fx.base}/review/sign-in/`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'token=x' })
    assert.notEqual(response.status, 301)
  })
})

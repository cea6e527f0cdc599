import assert from 'node:assert/strict'
import { request } from 'node:http'
import { describe, test } from 'node:test'
import { demoGatewayFor } from '../support/gateway-fixture.js'

// A POST route that reads no body took any body and ignored it: `POST /v1/selections/{id}/recover` with
// {"deadline_ms": 120000} (the review page's retry takes one) or `…/compensation` with {"targets": [...]} answered
// 201 with a recovery or a compensation of everything, another request than the one written. A body naming
// anything is now 400 invalid_request naming it, before any route runs; no body, or {}, is what it always was.
describe('a route that reads no body refuses one that names anything, and makes nothing', () => {
  const env = demoGatewayFor({ store: 'sqlite', count: 600 })

  const recoveries = async () => Number((await env.fx.gateway.store.db.selectFrom('selections').select((eb) => eb.fn.countAll().as('n')).where('origin', 'like', '%recovery%').executeTakeFirstOrThrow()).n)

  test('recover with a body naming a field is 400 naming it, and no recovery is made; without a body or with {} it is made', async () => {
    const agent = env.fx.as('agent')
    const partial = await agent('POST', '/v1/resources/subscriptions/selections', { filter: { status: 'past_due', region: 'us' }, page_size: 20, budget: { max_pages: 1 } })
    assert.equal(partial.body.complete, false)
    const path = `/v1/selections/${partial.body.selection_id}/recover`
    const refused = await agent('POST', path, { deadline_ms: 120000 })
    assert.equal(refused.status, 400, JSON.stringify(refused.body))
    assert.equal(refused.body.error.code, 'invalid_request')
    assert.match(refused.body.error.message, /takes no request body.*"deadline_ms"/)
    assert.equal(await recoveries(), 0)
    const notJson = await agent('POST', path, 'deadline_ms=120000', { 'content-type': 'application/x-www-form-urlencoded' })
    assert.equal(notJson.status, 400, JSON.stringify(notJson.body))
    assert.equal(await recoveries(), 0)
    assert.equal((await agent('POST', path, {})).status, 201)
    assert.equal((await agent('POST', path)).status, 200)
  })

  test('compensation and reconcile: the same refusal, before the operation is looked up', async () => {
    for (const path of ['/v1/operations/op_nope/compensation', '/v1/operations/op_nope/remainder', '/v1/operations/op_nope/reconcile']) {
      const refused = await env.fx.as('agent')('POST', path, { targets: ['sub_00001'] })
      assert.equal(refused.status, 400, `${path}: ${JSON.stringify(refused.body)}`)
      assert.match(refused.body.error.message, /"targets"/)
      assert.equal((await env.fx.as('agent')('POST', path)).status, 404)
    }
  })

  // A GET's body has no meaning (RFC 9110), yet a client may put its filters there (as some search APIs take them):
  // `GET /v1/audit` with {"principal": …} answered the whole log as if filtered
  test('a GET with a body naming anything is refused the same way; without one it answers', async () => {
    const admin = env.fx.as('admin')
    // fetch sends no GET body, node:http does (with a length: node refuses a chunked GET)
    const refused = await new Promise<{ status: number; body: any }>((resolve, reject) => {
      const body = JSON.stringify({ principal: 'prn_x', level: 'run' })
      const headers = { authorization: `Bearer ${env.fx.tokens.admin}`, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }
      const req = request(`${env.fx.base}/v1/audit`, { method: 'GET', headers }, (res) => {
        let text = ''
        res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : text }))
      })
      req.on('error', reject)
      req.end(body)
    })
    assert.equal(refused.status, 400, JSON.stringify(refused.body))
    assert.match(refused.body.error.message, /^GET \/v1\/audit takes no request body; this one has 35 bytes.*a GET's parameters go in its query$/)
    assert.equal((await admin('GET', '/v1/audit')).status, 200)
  })
})

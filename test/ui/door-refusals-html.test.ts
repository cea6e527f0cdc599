import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { demoGatewayFor } from '../support/gateway-fixture.js'

// The input guard in front of /review answered its refusals with the API's JSON error body: a reviewer following a
// mangled link, or a form sent compressed or too large, saw raw JSON in the browser. /review now gets a small HTML
// page with the same status naming the problem and its code; /v1 keeps the JSON body.
describe('the input guard answers /review with an HTML error page, /v1 with JSON', () => {
  const env = demoGatewayFor({ store: 'sqlite', count: 50 })

  test('a bad query, a NUL in the path, a compressed form and a too-large form on /review are HTML pages naming the problem', async () => {
    const cases: [string, RequestInit, number, RegExp][] = [
      ['/review/selections/sel_x/excluded?rule=%FF', {}, 400, /query parameter &quot;rule&quot; is not valid percent-encoded UTF-8|query parameter "rule" is not valid percent-encoded UTF-8/],
      ['/review/plans/plan%00x', {}, 400, /holds a NUL byte/],
      ['/review/sign-in', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-encoding': 'gzip' }, body: 'token=x' }, 400, /Content-Encoding: gzip/],
      ['/review/sign-in', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `token=${'x'.repeat(5 * 1024 * 1024)}` }, 413, /larger than \d+ bytes/],
    ]
    for (const [path, init, status, message] of cases) {
      const response = await fetch(`${env.fx.base}${path}`, { redirect: 'manual', ...init })
      const text = await response.text()
      assert.equal(response.status, status, `${path}: ${text.slice(0, 200)}`)
      assert.match(response.headers.get('content-type') ?? '', /^text\/html/, `${path}: ${text.slice(0, 200)}`)
      assert.match(text, /^<!doctype html>/i)
      assert.match(text, message, path)
      assert.match(text, /<code>(invalid_request|payload_too_large)<\/code>/, path)
      assert.equal(response.headers.get('x-content-type-options'), 'nosniff', path)
    }
  })

  test('the same refusal on /v1 stays the JSON error body', async () => {
    const answer = await env.fx.as('admin')('GET', '/v1/audit?principal=%FF')
    assert.equal(answer.status, 400)
    assert.match(answer.headers.get('content-type') ?? '', /application\/json/)
    assert.equal(answer.body.error.code, 'invalid_request')
  })

  test("the audit row of a /review refusal keeps the refusal's code", async () => {
    await fetch(`${env.fx.base}/review/plans/plan%00audited`)
    const page = await env.fx.as('admin')('GET', '/v1/audit?limit=1000')
    const row = (page.body.events as { summary: { path?: string; error?: string } }[]).find((e) => e.summary.path?.startsWith('/review/plans/plan') && e.summary.path.endsWith('audited'))
    assert.ok(row, 'a row for the refused page')
    assert.equal(row.summary.error, 'invalid_request')
  })
})

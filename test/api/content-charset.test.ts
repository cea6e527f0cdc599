import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { demoGatewayFor } from '../support/gateway-fixture.js'

// `Content-Type: application/json; charset=iso-8859-1` was read as UTF-8 all the same: a Latin-1 "café" became
// U+FFFD or was refused as "not UTF-8", and a UTF-16 body "malformed JSON", none naming the charset the client
// declared. A body declared in any charset but UTF-8 (utf8 and any case alike) is now refused 415 naming it; the
// review forms' form-urlencoded bodies too (an HTML page there); MCP's as a JSON-RPC error.
describe('a body declared in a charset other than UTF-8 is 415 naming the charset', () => {
  const env = demoGatewayFor({ store: 'sqlite', count: 50 })
  const search = (contentType: string) =>
    fetch(`${env.fx.base}/v1/resources/subscriptions/search`, {
      method: 'POST',
      headers: { authorization: `Bearer ${env.fx.tokens.agent}`, 'content-type': contentType },
      body: JSON.stringify({ filter: { status: 'past_due' }, budget: { max_pages: 1 } }),
    })

  test('on /v1: iso-8859-1, windows-1252, utf-16 (quoted too) are 415 naming the charset', async () => {
    for (const type of ['application/json; charset=iso-8859-1', 'application/json;charset=Windows-1252', 'application/json; charset="utf-16"']) {
      const response = await search(type)
      const body = (await response.json()) as { error: { code: string; message: string; details: { charset: string } } }
      assert.equal(response.status, 415, type)
      assert.equal(body.error.code, 'unsupported_media_type', type)
      const declared = /charset="?([^";]+)/i.exec(type)![1]!
      assert.match(body.error.message, new RegExp(`charset ${declared}`, 'i'), type)
      assert.match(body.error.message, /UTF-8/)
      assert.equal(body.error.details.charset.toLowerCase(), declared.toLowerCase())
    }
  })

  test('UTF-8 spelled in any case, utf8, quoted, or no charset at all is read as before', async () => {
    for (const type of ['application/json', 'application/json; charset=utf-8', 'application/json; charset=UTF-8', 'application/json; charset=utf8', 'application/json; charset="UTF-8"']) {
      assert.equal((await search(type)).status, 200, type)
    }
  })

  test('a review form declared in latin1 is a 415 HTML page; in utf-8 it is read', async () => {
    const form = (type: string) => fetch(`${env.fx.base}/review/sign-in`, { method: 'POST', redirect: 'manual', headers: { 'content-type': type }, body: 'token=x&csrf=y' })
    const refused = await form('application/x-www-form-urlencoded; charset=latin1')
    const text = await refused.text()
    assert.equal(refused.status, 415)
    assert.match(refused.headers.get('content-type') ?? '', /^text\/html/)
    assert.match(text, /charset latin1/)
    assert.notEqual((await form('application/x-www-form-urlencoded; charset=UTF-8')).status, 415)
  })

  test('/mcp: a JSON-RPC error with the refusal as data', async () => {
    const response = await fetch(`${env.fx.base}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${env.fx.tokens.agent}`, 'content-type': 'application/json; charset=iso-8859-1', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    })
    const body = (await response.json()) as { jsonrpc: string; error: { code: number; data: { error: { code: string } } } }
    assert.equal(response.status, 415)
    assert.equal(body.jsonrpc, '2.0')
    assert.equal(body.error.data.error.code, 'unsupported_media_type')
  })
})

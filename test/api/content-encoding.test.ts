import assert from 'node:assert/strict'
import { gzipSync } from 'node:zlib'
import { describe, test } from 'node:test'
import { demoGatewayFor } from '../support/gateway-fixture.js'

// The gateway never decompresses a request, yet read a body sent with `Content-Encoding: gzip` as if it were plain:
// a gzip body was refused as "malformed JSON" (or bytes that are not UTF-8), a client that labelled a plain body
// gzip was answered as if the header were not there. A request body in any coding but identity is now refused
// naming the header, on /v1 and /mcp alike.
describe('a request body sent with a Content-Encoding is refused naming the header', () => {
  const env = demoGatewayFor({ store: 'sqlite', count: 50 })

  test('/v1: gzip, really compressed or not, and br; identity passes', async () => {
    const { base, tokens } = env.fx
    const body = JSON.stringify({ filter: { status: 'active' } })
    const post = (encoding: string, payload: BodyInit) =>
      fetch(`${base}/v1/resources/subscriptions/search`, { method: 'POST', headers: { authorization: `Bearer ${tokens.agent}`, 'content-type': 'application/json', 'content-encoding': encoding }, body: payload })
    for (const [encoding, payload] of [
      ['gzip', new Uint8Array(gzipSync(body))],
      ['gzip', body],
      ['br', body],
    ] as const) {
      const response = await post(encoding, payload)
      const answer = (await response.json()) as any
      assert.equal(response.status, 400, `${encoding}: ${JSON.stringify(answer)}`)
      assert.equal(answer.error.code, 'invalid_request')
      assert.match(answer.error.message, new RegExp(`^the request body is sent with Content-Encoding: ${encoding}`))
      assert.equal(answer.error.details.field, 'content-encoding')
    }
    assert.equal((await post('identity', body)).status, 200)
  })

  test('/mcp: a JSON-RPC error naming it', async () => {
    const { base, tokens } = env.fx
    const response = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens.agent}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'content-encoding': 'gzip' },
      body: new Uint8Array(gzipSync(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }))),
    })
    const answer = (await response.json()) as any
    assert.equal(response.status, 400, JSON.stringify(answer))
    assert.equal(answer.jsonrpc, '2.0')
    assert.match(answer.error.message, /Content-Encoding: gzip/)
  })
})

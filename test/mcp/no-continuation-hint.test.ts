import assert from 'node:assert/strict'
import type { ServerResponse } from 'node:http'
import { after, before, describe, test } from 'node:test'
import { collectionSummary } from '../../src/mcp/summaries.js'
import { sendJson, startUpstream, type SeenRequest, type TestUpstream } from '../connectors/http/upstream-server.js'
import { usersResourceConfig } from '../operations/support/users-upstream.js'
import { startDemoGateway, type GatewayFixture } from '../support/gateway-fixture.js'

/** The list's answer: an error status, or 200 with records lacking declared fields (a config that does not fit). */
let status = 400
function lister(_req: SeenRequest, res: ServerResponse) {
  if (status === 200) return sendJson(res, 200, { items: [{ id: 'u1', status: 'active', version: 1 }], next_cursor: null })
  return sendJson(res, status, { error: 'no' })
}

/**
 * An incomplete search with no continuation told the agent to "narrow the request or report the result as
 * partial", whatever stopped it: for a source that refused the request (a 401, a config error) no narrower
 * request can help. The hint now follows the reasons. A real gateway, a real loopback upstream.
 */
describe('the MCP summary of an incomplete search with no continuation follows its reasons', () => {
  let up: TestUpstream | undefined
  let fx: GatewayFixture | undefined
  before(async () => {
    up = await startUpstream(lister)
    fx = await startDemoGateway({ store: 'sqlite', count: 10, edit: (config) => void (config.resources.users = usersResourceConfig(up!.origin)) })
  })
  after(async () => {
    await fx?.close()
    await up?.close()
  })
  const search = async () => {
    const token = (await fx!.gateway.principals.issue({ name: `hint-agent-${status}`, role: 'agent', scopes: { resources: ['users'], actions: '*' } })).token
    const res = await fetch(`${fx!.base}/v1/resources/users/search`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ filter: { status: 'active' } }) })
    const body = (await res.json()) as any
    assert.equal(res.status, 200, JSON.stringify(body))
    assert.equal(body.complete, false)
    return body
  }

  for (const [answer, code, fix] of [
    [400, 'SOURCE_UNAVAILABLE', /fixed/],
    [404, 'SOURCE_UNAVAILABLE', /fixed/],
    [401, 'VISIBILITY_RESTRICTED', /credential/],
    [200, 'SHAPE_MISMATCH', /config/],
  ] as const)
    test(`${code} (the list answered ${answer}): no advice to narrow the request; partial, and what would mend it`, async () => {
      status = answer
      const body = await search()
      assert.equal(body.continuation, null, JSON.stringify(body.continuation))
      assert.deepEqual(body.incomplete_reasons.map((r: any) => r.code), [code])
      const text = collectionSummary(body, body.items.length, 'users')
      assert.doesNotMatch(text, /narrow the request/, text)
      assert.match(text, /report the result as partial/, text)
      assert.match(text, fix, text)
    })
})

import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import pg from 'pg'
import { parseConfig } from '../../src/config/index.js'
import { createStore } from '../../src/store/index.js'
import { startDemoGateway, type GatewayFixture } from '../support/gateway-fixture.js'
import { startRelay, type Relay } from '../support/pg-relay.js'
import { TEST_POSTGRES_ADMIN_URL } from '../support/stores.js'

/**
 * A PostgreSQL store that goes away under a running gateway: its database dropped, or the server no longer
 * reachable (the connection cut, then refused), or a server that accepts and never answers. /health answered
 * 200 "ok" without asking the store, and every API request was a 500 `internal` "bug" with an error id. Now
 * /health asks the store one trivial question with a short timeout and answers 503 `store_unavailable` naming
 * the cause, and every request the store cannot serve is 503 `store_unavailable` naming it, on HTTP and MCP.
 */

async function health(base: string): Promise<{ status: number; body: any; ms: number }> {
  const started = Date.now()
  const response = await fetch(`${base}/health`)
  return { status: response.status, body: await response.json(), ms: Date.now() - started }
}

/** The API requests an agent makes, each reading or writing the store (authentication reads it first). */
async function assertRequestsRefused(fx: GatewayFixture, cause: RegExp): Promise<void> {
  const agent = fx.as('agent')
  for (const [method, path, body] of [
    ['GET', '/v1/resources', undefined],
    ['POST', '/v1/resources/subscriptions/search', { filter: { status: 'past_due' } }],
    ['POST', '/v1/resources/subscriptions/selections', { filter: { status: 'past_due' } }],
  ] as const) {
    const answer = await agent(method, path, body)
    assert.equal(answer.status, 503, `${method} ${path}: ${JSON.stringify(answer.body)}`)
    assert.equal(answer.body.error.code, 'store_unavailable', `${method} ${path}`)
    assert.match(answer.body.error.message, /PostgreSQL store/, `${method} ${path} names the store`)
    assert.match(answer.body.error.message, cause, `${method} ${path} names the cause`)
  }
  const mcp = await fetch(`${fx.base}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${fx.tokens.agent}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_resources', arguments: {} } }),
  })
  const text = await mcp.text()
  assert.doesNotMatch(text, /internal/, `MCP: ${text}`)
  assert.match(text, /store_unavailable/, `MCP: ${text}`)
}

/** A gateway whose PostgreSQL store is reached through `relay`. */
function gatewayThrough(relay: Relay): Promise<GatewayFixture> {
  return startDemoGateway({
    store: 'postgres',
    count: 50,
    edit: (raw) => {
      const url = new URL(raw.store)
      url.port = String(relay.port)
      raw.store = url.toString()
    },
  })
}

describe('a PostgreSQL store that goes away under a running gateway', () => {
  const admin = new pg.Client({ connectionString: TEST_POSTGRES_ADMIN_URL })
  before(() => admin.connect())
  after(() => admin.end())

  it('its database dropped: /health and every request answer 503 store_unavailable naming the missing database', async () => {
    const fx = await startDemoGateway({ store: 'postgres', count: 50 })
    try {
      assert.equal((await health(fx.base)).status, 200)
      const name = new URL(fx.storeUrl).pathname.slice(1)
      await admin.query(`DROP DATABASE ${name} WITH (FORCE)`)
      const answer = await health(fx.base)
      assert.equal(answer.status, 503, JSON.stringify(answer.body))
      assert.equal(answer.body.status, 'unavailable')
      assert.equal(answer.body.error.code, 'store_unavailable')
      assert.match(answer.body.error.message, new RegExp(`database "${name}" does not exist`))
      await assertRequestsRefused(fx, new RegExp(`database "${name}" does not exist`))
    } finally {
      await fx.close()
    }
  })

  it('its server cut off, then refusing connections: /health and every request answer 503 store_unavailable naming the cause', async () => {
    const relay = await startRelay(new URL(TEST_POSTGRES_ADMIN_URL))
    const fx = await gatewayThrough(relay)
    try {
      assert.equal((await health(fx.base)).status, 200)
      await relay.cut()
      const answer = await health(fx.base)
      assert.equal(answer.status, 503, JSON.stringify(answer.body))
      assert.equal(answer.body.error.code, 'store_unavailable')
      assert.match(answer.body.error.message, /ECONNREFUSED|terminated/)
      await assertRequestsRefused(fx, /ECONNREFUSED|terminated/)
    } finally {
      await fx.close()
    }
  })

  it('a server that accepts and never answers: /health answers 503 within its short timeout, not never', async () => {
    const relay = await startRelay(new URL(TEST_POSTGRES_ADMIN_URL))
    const fx = await gatewayThrough(relay)
    try {
      assert.equal((await health(fx.base)).status, 200)
      relay.silence()
      const answers = await Promise.all([health(fx.base), health(fx.base), health(fx.base)])
      for (const answer of answers) {
        assert.equal(answer.status, 503, JSON.stringify(answer.body))
        assert.equal(answer.body.error.code, 'store_unavailable')
        assert.match(answer.body.error.message, /did not answer within \d+ ms/)
        assert.ok(answer.ms < 4_000, `answered after ${answer.ms} ms`)
      }
    } finally {
      await relay.cut()
      await fx.close()
    }
  })

  it('a server that accepts and never answers when the store opens: refused within store.connect_timeout_ms, not a silent wait', async () => {
    const relay = await startRelay(new URL(TEST_POSTGRES_ADMIN_URL))
    relay.silence()
    try {
      const url = new URL(TEST_POSTGRES_ADMIN_URL)
      url.port = String(relay.port)
      const started = Date.now()
      await assert.rejects(createStore({ url: url.toString(), connectTimeoutMs: 300 }), (error: any) => {
        assert.equal(error.code, 'store_unavailable', String(error))
        assert.match(error.message, /cannot connect to PostgreSQL store/)
        assert.match(error.message, /timeout/i)
        return true
      })
      assert.ok(Date.now() - started < 5_000, `refused after ${Date.now() - started} ms`)
    } finally {
      await relay.cut()
    }
  })

  it('store.connect_timeout_ms is validated and refused on a sqlite: store, naming the full key', () => {
    const minimal = { resources: {} }
    assert.equal(parseConfig({ ...minimal, store: { url: 'postgres://u@127.0.0.1/w', connect_timeout_ms: 2500 } }).store.connect_timeout_ms, 2500)
    for (const [store, message] of [
      [{ url: 'sqlite:./w.db', connect_timeout_ms: 1000 }, /store\.connect_timeout_ms: .*PostgreSQL store only/],
      [{ url: 'postgres://u@127.0.0.1/w', connect_timeout_ms: 0 }, /store\.connect_timeout_ms: /],
      [{ url: 'postgres://u@127.0.0.1/w', connect_timeout_ms: 300_001 }, /store\.connect_timeout_ms: .*300000/],
    ] as const)
      assert.throws(() => parseConfig({ ...minimal, store }), (error: Error) => {
        assert.match(error.message, message)
        return true
      })
  })
})

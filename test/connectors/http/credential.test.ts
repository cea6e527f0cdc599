import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { createHttpConnector } from '../../../src/connectors/http/index.js'
import type { Connector } from '../../../src/connectors/connector.js'
import { callLog, collection, httpResource } from './fixtures.js'
import { sendJson, startUpstream, type TestUpstream } from './upstream-server.js'

const SECRET = 'sk-test-SECRET-7f3a'
const ITEMS = collection(3)

/** Everything a caller could see, as one string. Maps become entry lists so nothing hides in them. */
function visible(values: unknown[]): string {
  return JSON.stringify(values, (_k, v: unknown) => (v instanceof Map ? [...v.entries()] : v instanceof Error ? { ...v, name: v.name, message: v.message } : v))
}

describe('http credential', () => {
  let upstream: TestUpstream
  let dir: string
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'warrant-http-secret-'))
    upstream = await startUpstream((req, res) => {
      const presented = String(req.headers['authorization'] ?? req.headers['x-api-key'] ?? '')
      const path = req.url.pathname
      if (!presented.includes(SECRET)) return sendJson(res, 401, { error: 'no credential' })
      // an upstream that echoes the credential back everywhere it can
      if (path === '/items') return sendJson(res, 200, { items: ITEMS.map((i) => ({ ...i, note: `seen with ${presented}` })), next_cursor: null })
      if (path === '/echo-error') return sendJson(res, 500, { error: `token ${presented} is broken` })
      if (path === '/echo-cursor') return sendJson(res, 200, { items: ITEMS, next_cursor: `after-r003-${SECRET}` })
      if (path === '/echo-text') {
        res.writeHead(502, { 'content-type': 'text/plain' })
        return res.end(`proxy error for "${presented}"`)
      }
      if (path === '/items/r001' && req.method === 'GET') return sendJson(res, 403, { message: `credential ${presented} may not read r001` })
      if (path === '/items/r002' && req.method === 'GET')
        return sendJson(res, 200, { ...ITEMS[1], note: presented }, { etag: `"v-${SECRET}"` })
      if (path === '/items/r001' || path === '/items/r002' || path === '/items/r003') {
        if (req.body.includes('reject')) return sendJson(res, 422, { error: { message: `${presented} lacks scope` } })
        if (req.body.includes('crash')) return sendJson(res, 500, { error: `${presented} crashed` })
        return sendJson(res, 200, { ...ITEMS[2], note: presented })
      }
      return sendJson(res, 404, { error: `nothing here for ${presented}` })
    })
  })
  after(async () => {
    await upstream.close()
    await rm(dir, { recursive: true, force: true })
  })

  const resource = (credential: Record<string, unknown>) =>
    httpResource({ sources: [{ name: 'main', base_url: upstream.origin }], credential, list: { path: '/items', pagination: { style: 'cursor' } } })

  it('reads the secret from an environment variable and sends it as "<scheme> <secret>"', async () => {
    upstream.seen.length = 0
    const connector = createHttpConnector({
      resource: resource({ scheme: 'Bearer', secret: { env: 'WARRANT_TEST_HTTP_TOKEN' } }),
      env: { WARRANT_TEST_HTTP_TOKEN: SECRET },
    })
    const page = await (await connector.openSession()).readPage({ source: 'main', filter: {}, position: null, pageSize: 10 })
    assert.equal(page.kind, 'page')
    assert.equal(upstream.seen[0]?.headers['authorization'], `Bearer ${SECRET}`)
  })

  it('reads the secret from a file and sends it in the configured header', async () => {
    upstream.seen.length = 0
    const file = join(dir, 'token')
    await writeFile(file, `${SECRET}\n`)
    const connector = createHttpConnector({ resource: resource({ header: 'X-Api-Key', secret: { file } }), env: {} })
    const page = await (await connector.openSession()).readPage({ source: 'main', filter: {}, position: null, pageSize: 10 })
    assert.equal(page.kind, 'page')
    assert.equal(upstream.seen[0]?.headers['x-api-key'], SECRET)
    assert.equal(upstream.seen[0]?.headers['authorization'], undefined)
  })

  it('a secret from the environment ending in a newline (copied from a file) is sent without it; one of only whitespace is refused', async () => {
    upstream.seen.length = 0
    // as `TOKEN="$(cat token)"` keeps in an env file, or a mounted secret: node cannot send a header holding "\n"
    const connector = createHttpConnector({ resource: resource({ scheme: 'Bearer', secret: { env: 'WARRANT_TEST_HTTP_TOKEN' } }), env: { WARRANT_TEST_HTTP_TOKEN: ` ${SECRET}\n` } })
    const page = await (await connector.openSession()).readPage({ source: 'main', filter: {}, position: null, pageSize: 10 })
    assert.equal(page.kind, 'page')
    assert.equal(upstream.seen[0]?.headers['authorization'], `Bearer ${SECRET}`)
    assert.throws(() => createHttpConnector({ resource: resource({ secret: { env: 'WARRANT_TEST_BLANK' } }), env: { WARRANT_TEST_BLANK: ' \n' } }), {
      code: 'invalid_request',
      message: /WARRANT_TEST_BLANK is not set \(or holds only whitespace\)/,
    })
    const blank = join(dir, 'blank-token')
    await writeFile(blank, '\n')
    assert.throws(() => createHttpConnector({ resource: resource({ secret: { file: blank } }), env: {} }), { code: 'invalid_request', message: /is empty/ })
  })

  it('a missing secret fails at construction, naming where it was expected', () => {
    assert.throws(() => createHttpConnector({ resource: resource({ secret: { env: 'WARRANT_TEST_UNSET' } }), env: {} }), {
      code: 'invalid_request',
      message: /WARRANT_TEST_UNSET/,
    })
  })

  it('the secret appears in no result, error message or call record, even when the upstream echoes it', async () => {
    const log = callLog()
    const seen: unknown[] = []
    const make = (path: string): Connector =>
      createHttpConnector({
        resource: httpResource(
          {
            sources: [{ name: 'main', base_url: upstream.origin }],
            credential: { scheme: 'Bearer', secret: { env: 'TOKEN' } },
            list: { path, pagination: { style: 'cursor' } },
            absent_means_null: ['note'],
          },
          // `note` is declared: only declared fields reach a record, and the echo must arrive there redacted
          { fields: { id: 'string', status: 'string', amount: 'number', version: 'integer', note: 'string' } },
        ),
        env: { TOKEN: SECRET },
        onCall: log.onCall,
      })
    const main = make('/items')
    for (const path of ['/items', '/echo-error', '/echo-cursor', '/echo-text', '/missing']) {
      const session = await make(path).openSession()
      seen.push(await session.readPage({ source: 'main', filter: {}, position: null, pageSize: 10 }))
    }
    seen.push(await main.readByIds(['r001', 'r002', 'r404']))
    for (const [id, body] of [['r001', { op: 'reject' }], ['r002', { op: 'crash' }], ['r003', { op: 'ok' }]] as const) {
      seen.push(await main.write({ id, expectedVersion: '1', set: {}, precondition: {}, http: { method: 'PATCH', path: `/items/${id}`, body, ifMatch: true } }))
    }
    try {
      await main.write({ id: 'x', expectedVersion: '1', set: {}, precondition: {}, http: { method: 'PATCH', path: `/items/../${SECRET}`, ifMatch: true } })
    } catch (error) {
      seen.push(error)
    }
    seen.push(log.calls)

    const text = visible(seen)
    assert.ok(!text.includes(SECRET), `the secret leaked: ${text}`)
    assert.ok(!text.includes('SECRET-7f3a'))
    // the echo paths really were exercised: the upstream text arrived, with the secret redacted
    assert.match(text, /seen with Bearer \[redacted\]/)
    assert.match(text, /token Bearer \[redacted\] is broken/)
    assert.match(text, /Bearer \[redacted\] lacks scope/)
    assert.equal(log.calls.length, 11)
    const echoCursor = seen[2] as { kind: string }
    assert.equal(echoCursor.kind, 'refused', 'a next position carrying the secret is refused, not returned')
  })
})

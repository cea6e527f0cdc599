import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createHttpConnector } from '../../../src/connectors/http/index.js'
import { createCursorCodec, searchAll } from '../../../src/inventory/index.js'
import { httpResource } from './fixtures.js'
import { startUpstream, type TestUpstream } from './upstream-server.js'

// A base64 credential ("/", "+", "=") echoed back encoded, as upstreams do: percent-encoded in a next link
// they build with the key in its query, JSON with "/" escaped (PHP's json_encode) or "+" as \u002b, lower-case
// hex. The redaction matched the secret as written and as JSON.stringify writes it only, so each of these
// reached the agent: in a continuation cursor (signed, not encrypted: anyone base64-decodes it) or a message.
const SECRET = 'Zm9vYmFy/cXV4+YmF6=='
const ITEM = { id: 'r001', status: 'active', amount: 1, version: 1 }

/** Every way the test upstream writes the secret back; none may be found in what a caller sees. */
const LOWER_HEX = encodeURIComponent(SECRET).replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase())
const ENCODED = [SECRET, encodeURIComponent(SECRET), LOWER_HEX, SECRET.replace(/\//g, '\\/'), SECRET.replace(/\+/g, '\\u002b')]

describe('http credential echoed back encoded', () => {
  let upstream: TestUpstream
  before(async () => {
    upstream = await startUpstream((req, res) => {
      const path = req.url.pathname
      const json = (status: number, body: string, headers: Record<string, string> = {}) => {
        res.writeHead(status, { 'content-type': 'application/json', ...headers })
        res.end(body)
      }
      if (path === '/items' || path === '/linked') {
        // every page has one record and a next link: the walk stops at its page limit, its cursor at that link
        const page = Number(req.url.searchParams.get('page') ?? '1')
        const next = new URL(path, upstream.origin)
        next.searchParams.set('page', String(page + 1))
        next.searchParams.set('key', SECRET)
        const item = { ...ITEM, id: `r${String(page).padStart(3, '0')}` }
        return json(200, JSON.stringify({ items: [item], next: next.toString() }), path === '/linked' ? { link: `<${next}>; rel="next"` } : {})
      }
      // PHP's json_encode escapes every "/"
      if (path === '/php') return json(401, JSON.stringify({ error: `invalid key ${SECRET}` }).replace(/\//g, '\\/'))
      if (path === '/unicode') return json(401, JSON.stringify({ error: `invalid key ${SECRET}` }).replace(/\+/g, '\\u002b'))
      res.writeHead(502, { 'content-type': 'text/plain' })
      res.end(`proxy refused GET /v1?api_key=${LOWER_HEX}`)
    })
  })
  after(() => upstream.close())

  const connectorOn = (path: string, pagination: Record<string, unknown>) =>
    createHttpConnector({
      resource: httpResource({ sources: [{ name: 'main', base_url: upstream.origin }], credential: { scheme: 'Bearer', secret: { env: 'TOKEN' } }, list: { path, items_path: 'items', pagination } }),
      env: { TOKEN: SECRET },
    })

  /** What a search hands the agent, its continuation cursor decoded. */
  async function searched(path: string, pagination: Record<string, unknown>): Promise<string> {
    const connector = connectorOn(path, pagination)
    try {
      const envelope = await searchAll(
        connector,
        { resource: 'items', filter: {}, pageSize: 1 },
        { maxPages: 1 },
        { scope: { resource: 'items', environment: 'test-upstream', visibility: 'all', restricted: false }, cursorCodec: createCursorCodec({ key: 'k'.repeat(32) }) },
      )
      const cursor = envelope.continuation && 'cursor' in envelope.continuation ? envelope.continuation.cursor : undefined
      const decoded = typeof cursor === 'string' ? Buffer.from(cursor.split('.')[0]!, 'base64url').toString('utf8') : ''
      return JSON.stringify(envelope) + decoded
    } finally {
      await connector.close()
    }
  }

  for (const [path, pagination] of [
    ['/items', { style: 'next_link', path: 'next' }],
    ['/linked', { style: 'link_header' }],
  ] as const) {
    it(`a next link carrying the credential percent-encoded is refused, never put in a cursor (${pagination.style})`, async () => {
      const seen = await searched(path, pagination)
      for (const form of ENCODED) assert.ok(!seen.includes(form), `the credential leaked as ${form}: ${seen}`)
      assert.match(seen, /the next position carries the credential; refused/)
    })
  }

  for (const path of ['/php', '/unicode', '/text']) {
    it(`an error body echoing the credential escaped is quoted without it (${path})`, async () => {
      const connector = connectorOn(path, { style: 'cursor' })
      try {
        const page = await (await connector.openSession()).readPage({ source: 'main', filter: {}, position: null, pageSize: 10 })
        const seen = JSON.stringify(page)
        for (const form of ENCODED) assert.ok(!seen.includes(form), `the credential leaked as ${form}: ${seen}`)
        // the body was quoted, the credential in it replaced
        assert.match(seen, /(invalid key |api_key=)\[redacted\]/)
      } finally {
        await connector.close()
      }
    })
  }
})

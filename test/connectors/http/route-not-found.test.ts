import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Connector } from '../../../src/connectors/connector.js'
import { createHttpConnector } from '../../../src/connectors/http/index.js'
import { collection, httpResource } from './fixtures.js'
import { sendJson, startUpstream, type TestUpstream } from './upstream-server.js'

// A 404 is the API's word that a record is absent only when the API said it. A get.path (or write path) this
// upstream has no route for (`/item/{id}` for `/items/{id}`) is answered by the framework or a proxy in front of it
// with an HTML page (Express's "Cannot GET", nginx's "404 Not Found"), for every id: each record a walk had just
// shown read as missing, and an operation skipped every target as "no longer exists upstream".
const ITEMS = collection(3)
const EXPRESS_404 = '<!DOCTYPE html>\n<html lang="en">\n<head><meta charset="utf-8"><title>Error</title></head>\n<body><pre>Cannot GET /item/r001</pre></body>\n</html>\n'
const NGINX_404 = '<html>\r\n<head><title>404 Not Found</title></head>\r\n<body>\r\n<center><h1>404 Not Found</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n'

describe('a 404 that is a web page, not the API', () => {
  let up: TestUpstream
  before(async () => {
    up = await startUpstream((req, res) => {
      const m = /^\/(a|b)\/items\/([^/]+)$/.exec(req.url.pathname)
      if (m) {
        const item = ITEMS.find((i) => i.id === m[2])
        // source a serves its missing records as JSON 404s; both answer an empty 404 for "gone-empty"
        if (m[2] === 'gone-empty') return res.writeHead(404).end()
        if (!item) return sendJson(res, 404, { error: 'not_found' })
        if (req.method === 'GET') return sendJson(res, 200, item)
        return sendJson(res, 200, { ...item, status: 'paused', version: item.version + 1 })
      }
      if (req.url.pathname.startsWith('/a/')) {
        res.writeHead(404, { 'content-type': 'text/html; charset=utf-8' })
        return res.end(EXPRESS_404)
      }
      // no content-type at all, as some proxies answer
      res.writeHead(404)
      return res.end(NGINX_404)
    })
  })
  after(() => up.close())

  const connector = (getPath: string, sources = ['a']): Connector =>
    createHttpConnector({ resource: httpResource({ sources: sources.map((name) => ({ name, base_url: `${up.origin}/${name}` })), get: { path: getPath } }) })

  test('a get.path with no route (Express, text/html): each id failed with the 404, none missing (was: all missing)', async () => {
    const read = await connector('/item/{id}').readByIds(['r001', 'r002'])
    assert.deepEqual(read.missing, [], 'read as missing')
    assert.deepEqual(read.failed.map((f) => f.id), ['r001', 'r002'])
    for (const f of read.failed) {
      assert.equal(f.status, 404)
      assert.match(f.message, /HTML page/)
      assert.match(f.message, /connector\.get\.path/)
    }
  })

  test('nginx\'s page with no content-type is one too', async () => {
    const read = await connector('/item/{id}', ['b']).readByIds(['r001'])
    assert.deepEqual(read.missing, [])
    assert.equal(read.failed[0]?.status, 404)
  })

  test('the API\'s own 404 (JSON, or empty) is still missing, and a later source is still read', async () => {
    const read = await connector('/items/{id}').readByIds(['nope', 'gone-empty', 'r001'])
    assert.deepEqual([...read.missing].sort(), ['gone-empty', 'nope'])
    assert.deepEqual([...read.records.keys()], ['r001'])
  })

  test('a write to a path with no route is rejected with its 404, never "not found on any source" (was: skipped as missing)', async () => {
    const outcome = await connector('/items/{id}').write({
      id: 'r001',
      expectedVersion: '1',
      set: { status: 'paused' },
      precondition: {},
      http: { method: 'PATCH', path: '/item/r001', body: { status: 'paused' }, ifMatch: true },
    })
    assert.equal(outcome.kind, 'rejected', JSON.stringify(outcome))
    assert.equal(outcome.kind === 'rejected' && outcome.status, 404)
    assert.match(outcome.kind === 'rejected' ? outcome.message : '', /HTML page/)
  })

  test('a write the API answers with its own 404 is still the missing conflict', async () => {
    const outcome = await connector('/items/{id}').write({ id: 'nope', expectedVersion: '1', set: { status: 'paused' }, precondition: {}, http: { method: 'PATCH', path: '/items/nope', body: { status: 'paused' }, ifMatch: true } })
    assert.equal(outcome.kind, 'conflict')
    assert.equal(outcome.kind === 'conflict' && outcome.reason, 'missing')
  })
})

import assert from 'node:assert/strict'
import type { ServerResponse } from 'node:http'
import { after, before, describe, it } from 'node:test'
import { createHttpConnector } from '../../../src/connectors/http/index.js'
import { httpResource, idsOf, walk } from './fixtures.js'
import { startUpstream, type TestUpstream } from './upstream-server.js'

/**
 * JSON items as the upstream writes them, numbers and all: 9007199254740993 parses as 9007199254740992, the
 * id of another record (2^53 is the largest integer before a JSON number stops being exact).
 */
const ITEMS = [
  '{"id":9007199254740991,"status":"past_due","amount":1.5,"version":1}',
  '{"id":9007199254740993,"status":"past_due","amount":2.5,"version":1}',
  '{"id":12,"status":"active","amount":3,"version":9007199254740993}',
  '{"id":13,"status":"active","amount":4,"version":2}',
]

function sendRaw(res: ServerResponse, text: string): void {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
  res.end(text)
}

/**
 * An upstream whose numeric ids and versions can exceed what a JSON number holds exactly. A record whose
 * integer id or version came out rounded cannot be judged: it is counted in the page's `unjudged` (so the walk
 * is not complete), never returned under the rounded id, where a write would reach another record.
 */
describe('http connector: integers past 2^53 in JSON', () => {
  let upstream: TestUpstream
  before(async () => {
    upstream = await startUpstream((req, res) => {
      if (req.url.pathname === '/items') {
        const skip = Number(req.url.searchParams.get('skip') ?? 0)
        const limit = Number(req.url.searchParams.get('limit') ?? 2)
        return sendRaw(res, `{"items":[${ITEMS.slice(skip, skip + limit).join(',')}]}`)
      }
      const item = ITEMS.find((text) => text.startsWith(`{"id":${req.url.pathname.slice('/items/'.length)},`))
      if (item) return sendRaw(res, item)
      return sendRaw(res, '{"error":"not_found"}')
    })
  })
  after(() => upstream.close())

  const connector = (idType: 'integer' | 'number') =>
    createHttpConnector({
      resource: httpResource(
        { sources: [{ name: 'up', base_url: upstream.origin }], list: { path: '/items', page_size_param: 'limit', pagination: { style: 'offset', offset_param: 'skip' }, items_path: 'items' } },
        { fields: { id: idType, status: 'string', amount: 'number', version: 'integer' } },
      ),
    })

  for (const idType of ['integer', 'number'] as const) {
    it(`a walk (id declared ${idType}) leaves out, and counts, the records whose id or version JSON rounded`, async () => {
      const { records, results } = await walk(connector(idType), 'up', 2)
      assert.deepEqual(idsOf(records), ['9007199254740991', '13'])
      assert.ok(!idsOf(records).includes('9007199254740992'), 'no record under the rounded id')
      const unjudged = results.flatMap((r) => (r.kind === 'page' && r.unjudged ? [r.unjudged] : []))
      assert.deepEqual(unjudged, [
        { count: 1, absent: [], mistyped: ['id'] },
        { count: 1, absent: [], mistyped: ['version'] },
      ])
    })
  }

  it('a read by id of a rounded id fails and says why, rather than answering for the neighbour', async () => {
    const read = await connector('integer').readByIds(['9007199254740993'])
    assert.equal(read.records.size, 0)
    assert.equal(read.failed.length, 1)
    assert.match(read.failed[0]!.message, /past 2\^53/)
  })
})

import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createHttpConnector } from '../../../src/connectors/http/index.js'
import { httpResource, idsOf, rawItemsConnector, startRawItemsUpstream, walk } from './fixtures.js'
import type { TestUpstream } from './upstream-server.js'

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

/**
 * An upstream whose numeric ids and versions can exceed what a JSON number holds exactly. A record whose
 * integer id or version came out rounded cannot be judged: it is counted in the page's `unjudged` (so the walk
 * is not complete), never returned under the rounded id, where a write would reach another record.
 */
describe('http connector: integers past 2^53 in JSON', () => {
  let upstream: TestUpstream
  before(async () => {
    upstream = await startRawItemsUpstream(ITEMS)
  })
  after(() => upstream.close())

  const connector = (idType: 'integer' | 'number') =>
    createHttpConnector({
      resource: httpResource(
        rawItemsConnector(upstream.origin),
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

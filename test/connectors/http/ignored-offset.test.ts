import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { envelopeSchema } from '../../../src/contract/index.js'
import type { Connector } from '../../../src/connectors/connector.js'
import { createHttpConnector } from '../../../src/connectors/http/index.js'
import { createCursorCodec, searchAll } from '../../../src/inventory/index.js'
import { collection, httpResource } from './fixtures.js'
import { sendJson, startUpstream, type TestUpstream } from './upstream-server.js'

// An upstream that skips by `skip` while the config says offset_param "offset" answers its first page to every
// offset. The walk read it three times over, restarting as if the data had moved, and gave up with
// SNAPSHOT_INVALIDATED (retry later: every retry the same). The read past a page starts with the record that
// page started with: the same page again, a config that does not match the upstream, named as such.
const codec = createCursorCodec({ key: randomBytes(32) })
const scope = { resource: 'items', environment: 'test-upstream', visibility: 'all items', restricted: false }
const ITEMS = collection(14)

function search(connector: Connector) {
  return searchAll(connector, { resource: 'items', filter: {}, pageSize: 4 }, { maxPages: 40, deadlineMs: 10_000 }, { scope, cursorCodec: codec }).then((e) =>
    envelopeSchema.parse(e),
  )
}

function connectorAt(origin: string, offsetParam: string) {
  return createHttpConnector({
    resource: httpResource({
      sources: [{ name: 'ledger', base_url: origin }],
      list: { path: '/api/entries', items_path: 'rows', page_size_param: 'take', total_path: 'count', pagination: { style: 'offset', offset_param: offsetParam } },
    }),
  })
}

describe('offset paging whose offset parameter the upstream ignores', () => {
  let upstream: TestUpstream
  before(async () => {
    // {rows, count}: `skip` and `take`
    upstream = await startUpstream((req, res) => {
      const skip = Number(req.url.searchParams.get('skip') ?? 0)
      sendJson(res, 200, { rows: ITEMS.slice(skip, skip + Number(req.url.searchParams.get('take') ?? 10)), count: ITEMS.length })
    })
  })
  after(() => upstream.close())

  it('not complete, SOURCE_UNAVAILABLE naming pagination.offset_param, after two reads (was: SNAPSHOT_INVALIDATED after three passes)', async () => {
    upstream.seen.length = 0
    const envelope = await search(connectorAt(upstream.origin, 'offset'))
    assert.equal(envelope.complete, false)
    const reason = envelope.incomplete_reasons.find((r) => r.code === 'SOURCE_UNAVAILABLE')
    assert.ok(reason?.message?.includes('offset_param "offset"'), JSON.stringify(envelope.incomplete_reasons))
    assert.ok(!envelope.incomplete_reasons.some((r) => r.code === 'SNAPSHOT_INVALIDATED'), JSON.stringify(envelope.incomplete_reasons))
    assert.deepEqual(envelope.items.map((i) => i.id), ITEMS.slice(0, 4).map((i) => i.id), 'nothing counted twice')
    assert.equal(upstream.seen.length, 2)
  })

  it('the right parameter walks to the end, complete', async () => {
    const envelope = await search(connectorAt(upstream.origin, 'skip'))
    assert.equal(envelope.complete, true, JSON.stringify(envelope.incomplete_reasons))
    assert.deepEqual(envelope.items.map((i) => i.id), ITEMS.map((i) => i.id))
  })
})

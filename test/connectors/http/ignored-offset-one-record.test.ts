import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { envelopeSchema } from '../../../src/contract/index.js'
import { createHttpConnector } from '../../../src/connectors/http/index.js'
import { createCursorCodec, searchAll } from '../../../src/inventory/index.js'
import { httpResource } from './fixtures.js'
import { sendJson, startUpstream, type TestUpstream } from './upstream-server.js'

// An upstream holding one record that ignores the offset parameter (and sends no total): every read answers
// [r001]. The read past offset 1 found r001 just before it, as it should, but nothing after it, so the walk took
// the upstream for one capping its pages at one record and read offset 1 unchecked: r001 again, and again, until
// the page budget ran out, SNAPSHOT_INVALIDATED + CLIENT_LIMIT_REACHED with a continuation that looped. The read
// at an offset that starts with the record found just before it is the same record again: a config error
// naming pagination.offset_param, with no continuation.
const codec = createCursorCodec({ key: randomBytes(32) })
const scope = { resource: 'items', environment: 'test-upstream', visibility: 'all items', restricted: false }
const R001 = { ref: 'r001', state: 'open', amount: 1, rev: 3 }

describe('offset paging over one record, the offset parameter ignored', () => {
  let upstream: TestUpstream
  let capped: TestUpstream
  before(async () => {
    upstream = await startUpstream((_req, res) => sendJson(res, 200, { results: [R001] }))
    // a lawful upstream capping its pages at one record: the walk must still reach its end, complete
    const three = ['r001', 'r002', 'r003'].map((ref) => ({ ...R001, ref }))
    capped = await startUpstream((req, res) => {
      const start = Number(req.url.searchParams.get('start') ?? 0)
      sendJson(res, 200, { results: three.slice(start, start + 1) })
    })
  })
  after(async () => {
    await upstream.close()
    await capped.close()
  })

  const search = (origin: string) =>
    searchAll(
      createHttpConnector({
        resource: httpResource(
          {
            sources: [{ name: 'crm', base_url: origin }],
            version: { from: 'field', field: 'rev' },
            field_paths: { id: 'ref' },
            list: { path: '/api/v1/contacts', items_path: 'results', pagination: { style: 'offset', offset_param: 'start' } },
          },
          { fields: { id: 'string', state: 'string', amount: 'number', rev: 'integer' } },
        ),
      }),
      { resource: 'items', filter: {}, pageSize: 50 },
      { maxPages: 40, deadlineMs: 10_000 },
      { scope, cursorCodec: codec },
    ).then((e) => envelopeSchema.parse(e))

  it('not complete, SOURCE_UNAVAILABLE naming pagination.offset_param, no continuation, a few reads', async () => {
    upstream.seen.length = 0
    const envelope = await search(upstream.origin)
    assert.equal(envelope.complete, false)
    const reason = envelope.incomplete_reasons.find((r) => r.code === 'SOURCE_UNAVAILABLE')
    assert.ok(reason?.message?.includes('offset_param "start"'), JSON.stringify(envelope.incomplete_reasons))
    assert.deepEqual(envelope.incomplete_reasons.map((r) => r.code).filter((c) => c === 'SNAPSHOT_INVALIDATED' || c === 'CLIENT_LIMIT_REACHED'), [])
    assert.equal(envelope.continuation, null)
    assert.deepEqual(envelope.items.map((i) => i.id), ['r001'], 'nothing counted twice')
    assert.ok(upstream.seen.length <= 4, `${upstream.seen.length} reads`)
  })

  it('an upstream that pages one record at a time still walks to its end, complete', async () => {
    const envelope = await search(capped.origin)
    assert.equal(envelope.complete, true, JSON.stringify(envelope.incomplete_reasons))
    assert.deepEqual(envelope.items.map((i) => i.id), ['r001', 'r002', 'r003'])
  })
})

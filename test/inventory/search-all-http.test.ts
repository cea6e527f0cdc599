import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { randomBytes } from 'node:crypto'
import { envelopeSchema } from '../../src/contract/index.js'
import { createHttpConnector } from '../../src/connectors/http/index.js'
import { createCursorCodec, searchAll } from '../../src/inventory/index.js'
import { collection, httpResource } from '../connectors/http/fixtures.js'
import { delay, sendJson, startUpstream, type TestUpstream } from '../connectors/http/upstream-server.js'

// searchAll over the real http connector and real loopback upstreams: the upstream's signals must arrive in
// the envelope as reason codes, with the items that were read.
const ITEMS = collection(30)
const codec = createCursorCodec({ key: randomBytes(32) })
const scope = { resource: 'items', environment: 'test-upstream', visibility: 'all items', restricted: false }

describe('searchAll over the http connector (real loopback upstreams)', () => {
  let eu: TestUpstream
  let us: TestUpstream
  let mode = 'ok'
  before(async () => {
    const page = (req: { url: URL }, res: Parameters<Parameters<typeof startUpstream>[0]>[1], items: typeof ITEMS) => {
      const after = Number(req.url.searchParams.get('cursor') ?? 0)
      const slice = items.slice(after, after + 5)
      const next = after + 5 < items.length ? String(after + 5) : null
      sendJson(res, 200, { items: slice, next_cursor: next, incomplete_results: mode === 'incomplete' && after >= 5 })
    }
    eu = await startUpstream((req, res) => page(req, res, ITEMS.slice(0, 15)))
    us = await startUpstream(async (req, res) => {
      if (mode === 'slow') await delay(8000)
      if (mode === 'limited' && req.url.searchParams.get('cursor') === '5') return sendJson(res, 429, { error: 'slow down' }, { 'retry-after': '7' })
      page(req, res, ITEMS.slice(15))
    })
  })
  after(async () => {
    await eu?.close()
    await us?.close()
  })

  const connector = () =>
    createHttpConnector({
      resource: httpResource({
        // wide enough for two shared, busy cores (2 s a page on loopback); only the slow shard (8 s) must miss it
        timeout_ms: 2000,
        sources: [
          { name: 'eu-shard', base_url: eu.origin },
          { name: 'us-shard', base_url: us.origin },
        ],
        list: { path: '/items', pagination: { style: 'cursor' }, incomplete_flag: { path: 'incomplete_results', reason: 'RESULT_LIMIT_REACHED' } },
      }),
    })
  const search = (budget = {}) => searchAll(connector(), { resource: 'items', filter: {}, pageSize: 5 }, budget, { scope, cursorCodec: codec })

  test('both shards answer: complete, every item once, no snapshot claimed', async () => {
    mode = 'ok'
    const envelope = envelopeSchema.parse(await search())
    assert.equal(envelope.complete, true, JSON.stringify(envelope.incomplete_reasons))
    assert.equal(envelope.items.length, 30)
    assert.equal(envelope.scope.consistent_snapshot, false)
  })

  test('a shard that times out: SOURCE_UNAVAILABLE names it, the other shard\'s items are returned', async () => {
    mode = 'slow'
    const envelope = envelopeSchema.parse(await search())
    assert.equal(envelope.complete, false)
    const reason = envelope.incomplete_reasons.find((r) => r.code === 'SOURCE_UNAVAILABLE')
    assert.equal(reason?.source, 'us-shard')
    assert.equal(envelope.items.length, 15)
  })

  test('429 with Retry-After: RATE_LIMITED with a retry_after continuation that resumes the walk', async () => {
    mode = 'limited'
    const envelope = envelopeSchema.parse(await search())
    assert.equal(envelope.complete, false)
    assert.equal(envelope.incomplete_reasons[0]?.code, 'RATE_LIMITED')
    assert.equal(envelope.continuation?.kind, 'retry_after')
    assert.ok(envelope.continuation?.kind === 'retry_after' && envelope.continuation.retry_after_seconds === 7 && envelope.continuation.cursor)
    mode = 'ok'
    const cursor = (envelope.continuation as { cursor: string }).cursor
    const afterWait = { now: () => Date.parse((envelope.continuation as { not_before: string }).not_before) }
    const rest = await searchAll(connector(), { resource: 'items', filter: {}, pageSize: 5, cursor }, {}, { scope, cursorCodec: codec, clock: afterWait })
    assert.equal(rest.complete, true)
    assert.equal(new Set([...envelope.items, ...rest.items].map((i) => i.id)).size, 30)
  })

  test('an upstream incompleteness flag becomes RESULT_LIMIT_REACHED naming the source', async () => {
    mode = 'incomplete'
    const envelope = envelopeSchema.parse(await search())
    assert.equal(envelope.complete, false)
    assert.equal(envelope.truncated, true)
    assert.ok(envelope.incomplete_reasons.some((r) => r.code === 'RESULT_LIMIT_REACHED' && r.source === 'eu-shard'))
  })

  test('an empty first page with more pages is never the end of a shard', async () => {
    mode = 'ok'
    const envelope = await searchAll(connector(), { resource: 'items', filter: { status: 'nope' }, pageSize: 5 }, { maxPages: 1 }, { scope, cursorCodec: codec })
    assert.equal(envelope.items.length, 0)
    assert.equal(envelope.complete, false)
    assert.equal(envelope.incomplete_reasons[0]?.code, 'CLIENT_LIMIT_REACHED')
  })
})

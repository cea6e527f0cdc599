import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { createHttpConnector } from '../../src/connectors/http/index.js'
import { envelopeSchema } from '../../src/contract/index.js'
import { createCursorCodec, searchAll } from '../../src/inventory/index.js'
import { collection, httpResource } from '../connectors/http/fixtures.js'
import { sendJson, startUpstream, type TestUpstream } from '../connectors/http/upstream-server.js'

// An id field that names no one record (`status`), on an upstream paged by an opaque cursor, pages of one or two
// records: no one answer holds two records under one id, so the walk saw only ids coming again on later pages, and
// said the records "moved while the walk … was reading it" (an agent is told a new search may finish: it never
// does) and that "the later copies were dropped" (they were other records). Both now name the other cause.
const ITEMS = collection(8)
const codec = createCursorCodec({ key: randomBytes(32) })
const scope = { resource: 'items', environment: 'ids-across-pages', visibility: 'all items', restricted: false }

describe('an id field that is not unique, seen only across pages (real loopback upstream)', () => {
  let upstream: TestUpstream
  before(async () => {
    upstream = await startUpstream((req, res) => {
      const from = Number(req.url.searchParams.get('after') ?? 0)
      const size = Number(req.url.searchParams.get('limit') ?? 1)
      const next = from + size < ITEMS.length ? String(from + size) : null
      sendJson(res, 200, { items: ITEMS.slice(from, from + size), next })
    })
  })
  after(() => upstream.close())

  const search = (idField: string) =>
    searchAll(
      createHttpConnector({
        resource: httpResource(
          { sources: [{ name: 'main', base_url: upstream.origin }], list: { path: '/items', page_size_param: 'limit', pagination: { style: 'cursor', param: 'after', next_cursor_path: 'next' } } },
          { id_field: idField },
        ),
      }),
      { resource: 'items', filter: {}, pageSize: 1 },
      { maxPages: 50, deadlineMs: 10_000 },
      { scope, cursorCodec: codec },
    ).then((e) => envelopeSchema.parse(e))

  test('not complete, and the reason and warning name the id field as a cause, not only moving data', async () => {
    const env = await search('status')
    assert.equal(env.complete, false)
    const reason = env.incomplete_reasons.find((r) => r.code === 'SNAPSHOT_INVALIDATED')
    assert.ok(reason, JSON.stringify(env.incomplete_reasons))
    assert.match(reason.message ?? '', /not unique/)
    assert.match(reason.message ?? '', /id_field/)
    const warning = env.warnings.find((w) => w.code === 'ORDER_FALLBACK')
    assert.ok(warning)
    assert.doesNotMatch(warning.message, /the later copies were dropped/)
    assert.match(warning.message, /not unique/)
  })

  test('a unique id field: complete, as before', async () => {
    const env = await search('id')
    assert.equal(env.complete, true, JSON.stringify(env.incomplete_reasons))
    assert.equal(env.items.length, ITEMS.length)
  })
})

import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createHttpConnector } from '../../../src/connectors/http/index.js'
import { parseConfig } from '../../../src/config/index.js'
import { collection, httpResource } from './fixtures.js'
import { sendJson, startUpstream, type TestUpstream } from './upstream-server.js'

// A total in a response header (X-Total-Count, as json-server and many REST frameworks send it) is read as
// the page's total, and a header that is not a count is a failed page, never a guess.
describe('list.total_header', () => {
  const items = collection(12)
  let header = '12'
  let upstream: TestUpstream
  before(async () => {
    upstream = await startUpstream((req, res) => {
      const offset = Number(req.url.searchParams.get('offset') ?? 0)
      sendJson(res, 200, { results: items.slice(offset, offset + 5) }, { 'x-total-count': header })
    })
  })
  after(() => upstream?.close())
  const read = async () => {
    const connector = createHttpConnector({
      resource: httpResource({
        sources: [{ name: 'main', base_url: upstream.origin }],
        list: { path: '/items', items_path: 'results', page_size_param: 'limit', total_header: 'X-Total-Count', pagination: { style: 'offset' } },
      }),
    })
    const session = await connector.openSession()
    try {
      return await session.readPage({ source: 'main', filter: {}, position: null, pageSize: 5 })
    } finally {
      await session.close()
    }
  }

  test('the header is the total', async () => {
    header = '12'
    const page = await read()
    assert.equal(page.kind, 'page')
    assert.equal(page.kind === 'page' && page.total, 12)
  })

  test('a header that is not a count: the page fails, naming the header', async () => {
    header = 'lots'
    const page = await read()
    // A malformed answer is a permanent failure: asking again gets the same answer.
    assert.equal(page.kind, 'refused')
    assert.match(page.kind === 'refused' ? page.message : '', /header X-Total-Count is not a count/)
  })

  test('total_path and total_header together are refused at load', () => {
    const raw = {
      resources: {
        items: {
          environment: { name: 'test' },
          connector: {
            kind: 'http',
            sources: [{ name: 'main', base_url: 'http://127.0.0.1:9' }],
            list: { path: '/items', total_path: 'total', total_header: 'X-Total-Count', pagination: { style: 'offset' } },
            get: { path: '/items/{id}' },
            version: { from: 'field', field: 'version' },
          },
          fields: { id: 'string', version: 'integer' },
          review_fields: ['id'],
        },
      },
    }
    assert.throws(() => parseConfig(raw, 'test'), /total_header[\s\S]*one place/)
  })
})

import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createHttpConnector } from '../../../src/connectors/http/index.js'
import { httpResource } from './fixtures.js'
import { startRawJsonUpstream, type TestUpstream } from './upstream-server.js'

/**
 * An upstream whose next cursor is a 64-bit integer written as a JSON number (as Twitter's v1.1 `next_cursor`
 * is, beside `next_cursor_str`). JSON.parse reads 9007199254740993 as 9007199254740992: the walk asked for a
 * position the upstream never gave, got an empty last page, and called the list whole without record "b".
 * A cursor JSON rounded is refused, naming next_cursor_path, so the list is never called complete.
 */
describe('http connector: a next cursor past 2^53 written as a JSON number', () => {
  let upstream: TestUpstream
  before(async () => {
    upstream = await startRawJsonUpstream((req) => {
      const cursor = req.url.searchParams.get('cursor')
      if (cursor === null) return '{"users":[{"id":"a","status":"x","amount":1,"version":1}],"next_cursor":9007199254740993,"next_cursor_str":"9007199254740993"}'
      if (cursor === '9007199254740993') return '{"users":[{"id":"b","status":"x","amount":1,"version":1}],"next_cursor":0,"next_cursor_str":"0"}'
      return '{"users":[],"next_cursor":null,"next_cursor_str":null}'
    })
  })
  after(() => upstream.close())

  const connector = (path: string) =>
    createHttpConnector({
      resource: httpResource({
        sources: [{ name: 'tw', base_url: upstream.origin }],
        list: { path: '/followers', items_path: 'users', pagination: { style: 'cursor', param: 'cursor', next_cursor_path: path } },
      }),
    })

  it('the page carrying it is refused, naming next_cursor_path, not passed on as a rounded position', async () => {
    const session = await connector('next_cursor').openSession()
    const page = await session.readPage({ source: 'tw', filter: {}, position: null, pageSize: 1 })
    await session.close()
    assert.equal(page.kind, 'refused', JSON.stringify(page))
    assert.match(page.kind === 'refused' ? page.message : '', /next_cursor_path "next_cursor".*2\^53/)
  })

  it('the string form of the same cursor walks on exactly', async () => {
    const session = await connector('next_cursor_str').openSession()
    const page = await session.readPage({ source: 'tw', filter: {}, position: null, pageSize: 1 })
    assert.equal(page.kind, 'page')
    const second = await session.readPage({ source: 'tw', filter: {}, position: page.kind === 'page' ? page.next : null, pageSize: 1 })
    await session.close()
    assert.deepEqual(second.kind === 'page' ? second.items.map((r) => r.id) : second, ['b'])
  })
})

import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { searchRequestSchema } from '../../src/resources/index.js'
import { collection } from '../connectors/http/fixtures.js'
import { sendJson, startUpstream, type TestUpstream } from '../connectors/http/upstream-server.js'
import { httpWalker } from './helpers.js'

/**
 * An upstream's next cursor travels inside the walk's continuation, which a caller sends back in a request that
 * takes at most 16 384 characters. A 20 000-character cursor (a scroll id over many shards) made a continuation
 * of 27 000 the same walk then refused (400): an answer promising "the cursor resumes it" that nothing could
 * follow. The source that cannot be carried is ended, named, and every other one still continues.
 */
const ITEMS = collection(10)

describe('a continuation never carries more than a request may send back (real loopback upstreams)', () => {
  let long: TestUpstream
  let short: TestUpstream
  before(async () => {
    const pages = (next: string) => (req: { url: URL }, res: Parameters<Parameters<typeof startUpstream>[0]>[1]) =>
      req.url.searchParams.get('cursor') ? sendJson(res, 200, { items: ITEMS.slice(5), next_cursor: null }) : sendJson(res, 200, { items: ITEMS.slice(0, 5), next_cursor: next })
    long = await startUpstream(pages('c'.repeat(20_000)))
    short = await startUpstream(pages('page-2'))
  })
  after(async () => {
    await long?.close()
    await short?.close()
  })

  test('a next position too long to carry ends its source SOURCE_UNAVAILABLE; the continuation fits a request and still resumes the other source', async () => {
    const walk = httpWalker({ long: long.origin, short: short.origin })
    // one page: the walk stops at its budget holding the long source's cursor
    const first = await walk({ pageSize: 5 }, { maxPages: 1 })
    const cursor = (first.continuation as { cursor?: string } | null)?.cursor
    assert.ok(cursor, JSON.stringify(first.continuation))
    assert.ok(searchRequestSchema.safeParse({ cursor }).success, `the continuation (${cursor.length} characters) is one a request may send back`)
    const reason = first.incomplete_reasons.find((r) => r.source === 'long')
    assert.equal(reason?.code, 'SOURCE_UNAVAILABLE', JSON.stringify(first.incomplete_reasons))
    assert.match(reason!.message, /20000 characters/)
    // waiting would not change the position the upstream gives: no wait is named, and the text says what can read it
    assert.doesNotMatch(reason!.message, /fail the same way/)
    assert.match(reason!.message, /a walk that reads it through in one call \(a larger budget\) can$/)
    assert.equal(reason?.retry_after_seconds, undefined)
    const rest = await walk({ pageSize: 5, cursor })
    assert.deepEqual(rest.items.map((i) => [i.source, i.id]), ITEMS.map((i) => ['short', i.id]))
    assert.equal(rest.complete, false, 'the long source is still missing its second page')
  })
})

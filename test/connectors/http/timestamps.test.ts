import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createHttpConnector } from '../../../src/connectors/http/index.js'
import { httpResource, idsOf, rawItemsConnector, startRawItemsUpstream, walk } from './fixtures.js'
import type { TestUpstream } from './upstream-server.js'

/**
 * An API's timestamps in several spellings. Filters compare timestamps by instant: an offset is the same instant
 * as its UTC spelling, and a value that names none (an epoch number: seconds or milliseconds?, a date in words)
 * cannot be judged, so it is counted and named rather than silently left out of `updated_at < noon`.
 */
const ITEMS = [
  '{"id":"a","updated_at":"2024-06-01T11:00:00Z","version":1}',
  '{"id":"b","updated_at":"2024-06-01T13:30:00+02:00","version":1}',
  '{"id":"c","updated_at":"2024-06-01T12:00:00.500Z","version":1}',
  '{"id":"d","updated_at":1717236000,"version":1}',
  '{"id":"e","updated_at":"Sat, 01 Jun 2024 10:00:00 GMT","version":1}',
  '{"id":"f","updated_at":null,"version":1}',
]

describe('http connector: timestamps', () => {
  let upstream: TestUpstream
  before(async () => {
    upstream = await startRawItemsUpstream(ITEMS)
  })
  after(() => upstream.close())

  const connector = () => createHttpConnector({ resource: httpResource(rawItemsConnector(upstream.origin), { fields: { id: 'string', updated_at: 'timestamp', version: 'integer' }, review_fields: ['id', 'updated_at'] }) })

  it('updated_at before noon: by instant, offsets included; the two that name no instant are named, not dropped', async () => {
    const { records, results } = await walk(connector(), 'up', 2, { updated_at: { lt: '2024-06-01T12:00:00Z' } })
    assert.deepEqual(idsOf(records), ['a', 'b'])
    const unjudged = results.flatMap((r) => (r.kind === 'page' && r.unjudged ? [r.unjudged] : []))
    assert.deepEqual(unjudged, [{ count: 1, absent: [], mistyped: ['updated_at'] }, { count: 1, absent: [], mistyped: ['updated_at'] }])
  })

  it('unfiltered, the same two are named; a null timestamp is a value like any other', async () => {
    const { records } = await walk(connector(), 'up', 2)
    assert.deepEqual(idsOf(records), ['a', 'b', 'c', 'f'])
  })
})

import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { checkResource } from '../../src/checks/index.js'
import { createHttpConnector } from '../../src/connectors/http/index.js'
import { collection, httpResource, stripeLikeList } from '../connectors/http/fixtures.js'
import { sendJson, startUpstream, type TestUpstream } from '../connectors/http/upstream-server.js'

// A Stripe-like list whose records carry no version (the version field is in absent_means_null, and absent): each is
// read, carries its declared fields, and cannot be frozen (versions says so). pages_read and declared_fields counted
// only the records that could be kept, and said "0 records in 2 pages" and "holds: 0 records": the pages were read
// and the records did carry their fields, so the counts are of the records the upstream sent.
describe('check: counts of records read that carry no version (real loopback upstream)', () => {
  const items = collection(5).map(({ version: _version, ...rest }) => rest)
  let upstream: TestUpstream
  before(async () => {
    upstream = await startUpstream((req, res) => {
      const after = req.url.searchParams.get('starting_after')
      const from = after === null ? 0 : items.findIndex((i) => i.id === after) + 1
      sendJson(res, 200, { data: items.slice(from, from + 3), has_more: from + 3 < items.length, total_count: items.length })
    })
  })
  after(() => upstream.close())

  test('pages_read and declared_fields count the 5 records read; versions is the broken line', async () => {
    const config = httpResource({ sources: [{ name: 'main', base_url: upstream.origin }], list: stripeLikeList(), absent_means_null: ['version'] })
    const report = await checkResource({ name: 'items', config, connector: createHttpConnector({ resource: config }), pages: 5, pageSize: 10 })
    const line = (name: string) => report.guarantees.find((g) => g.name === name)!
    assert.equal(line('pages_read').status, 'holds')
    assert.match(line('pages_read').detail, /^5 records in 2 pages/)
    assert.equal(line('declared_fields').status, 'holds')
    assert.match(line('declared_fields').detail, /^5 records, 4 fields each/)
    assert.equal(line('versions').status, 'fails_closed')
  })
})

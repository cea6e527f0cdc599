import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { checkResource } from '../../src/checks/index.js'
import { createHttpConnector } from '../../src/connectors/http/index.js'
import { httpResource } from '../connectors/http/fixtures.js'
import { sendJson, startUpstream, type TestUpstream } from '../connectors/http/upstream-server.js'

/**
 * `version.from: etag` over a list whose items carry no ETag (each record read alone carries one): `warrant
 * check` said `read_by_id` failed ('the list says version "", the read by id ""g-r1""') and `versions` that
 * writes to them "are refused", when selections froze them at "" and every commit halted as if they changed.
 * It now names the config mistake on the versions line: no ETag in the list, and the two fixes.
 */
describe('warrant check: an ETag-versioned list whose items carry no ETag', () => {
  const items = ['r1', 'r2', 'r3'].map((id) => ({ id, status: 'active', amount: 1 }))
  let tagged = false
  let upstream: TestUpstream
  before(async () => {
    upstream = await startUpstream((req, res) => {
      if (req.url.pathname === '/items') return sendJson(res, 200, { items: tagged ? items.map((i) => ({ ...i, etag: `"g-${i.id}"` })) : items, next_cursor: null })
      const item = items.find((i) => i.id === req.url.pathname.slice('/items/'.length))
      return item ? sendJson(res, 200, item, { etag: `"g-${item.id}"` }) : sendJson(res, 404, {})
    })
  })
  after(() => upstream.close())

  const check = () => {
    const config = httpResource(
      { sources: [{ name: 'main', base_url: upstream.origin }], version: { from: 'etag' }, list: { path: '/items', pagination: { style: 'cursor', next_cursor_path: 'next_cursor' } } },
      { fields: { id: 'string', status: 'string', amount: 'number' }, actions: { pause: { set: { status: 'paused' }, write: { method: 'PATCH', path: '/items/{id}' } } } },
    )
    return checkResource({ name: 'items', config, connector: createHttpConnector({ resource: config }), pages: 5, pageSize: 10 })
  }

  test('versions fails closed, naming the missing ETag and connector.version; with per-item ETags it holds', async () => {
    tagged = false
    const report = await check()
    const versions = report.guarantees.find((g) => g.name === 'versions')!
    assert.equal(versions.status, 'fails_closed', versions.detail)
    assert.match(versions.detail, /3 of 3 records have no version/)
    assert.match(versions.detail, /no ETag/)
    assert.match(versions.detail, /etag member/)
    assert.deepEqual(versions.config_keys, ['connector.version'])
    assert.notEqual(report.verdict, 'holds')
    tagged = true
    const fixed = await check()
    assert.equal(fixed.guarantees.find((g) => g.name === 'versions')?.status, 'holds')
  })
})

import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { checkResource } from '../../src/checks/index.js'
import { createHttpConnector } from '../../src/connectors/http/index.js'
import { httpResource } from '../connectors/http/fixtures.js'
import { sendJson, startUpstream, type TestUpstream } from '../connectors/http/upstream-server.js'

/**
 * An http upstream whose list answers a timestamp as `2026-01-01T10:00:00Z` and whose read by id answers the same
 * instant as `2026-01-01T10:00:00.000Z` (the version `updated_at`, and a declared timestamp field `renewed_at`).
 * The executor takes those for the same instant (`sameVersion`, `sameAsDeclared`), so a selection frozen from the
 * list commits; `warrant check` compared them as text and said `read_by_id` fails_closed, blaming `connector.get`:
 * a false alarm on a working config. It now compares as the executor does, and still fails where the read by id
 * answers another instant.
 */
describe('warrant check: read_by_id compares timestamps by instant, as the executor does', () => {
  const listed = ['r1', 'r2', 'r3'].map((id) => ({ id, status: 'active', amount: 5, updated_at: '2026-01-01T10:00:00Z', renewed_at: '2026-02-01T08:30:00Z' }))
  /** What the read by id answers, record by record. */
  let readAlone: (item: (typeof listed)[number]) => Record<string, unknown> = (item) => item
  let upstream: TestUpstream
  before(async () => {
    upstream = await startUpstream((req, res) => {
      if (req.url.pathname === '/items') return sendJson(res, 200, { items: listed, next_cursor: null })
      const item = listed.find((i) => i.id === req.url.pathname.slice('/items/'.length))
      return item ? sendJson(res, 200, readAlone(item)) : sendJson(res, 404, {})
    })
  })
  after(() => upstream.close())

  const readById = async () => {
    const config = httpResource(
      { sources: [{ name: 'main', base_url: upstream.origin }], version: { from: 'field', field: 'updated_at' }, list: { path: '/items', pagination: { style: 'cursor', next_cursor_path: 'next_cursor' } } },
      { fields: { id: 'string', status: 'string', amount: 'number', updated_at: 'timestamp', renewed_at: 'timestamp' } },
    )
    const connector = createHttpConnector({ resource: config })
    try {
      const report = await checkResource({ name: 'items', config, connector, pages: 2, pageSize: 10 })
      return report.guarantees.find((g) => g.name === 'read_by_id')!
    } finally {
      await connector.close()
    }
  }

  test('the same instants in another spelling (.000Z) hold', async () => {
    readAlone = (item) => ({ ...item, updated_at: '2026-01-01T10:00:00.000Z', renewed_at: '2026-02-01T08:30:00.000Z' })
    const read = await readById()
    assert.equal(read.status, 'holds', read.detail)
  })

  test('another instant of the version still fails closed, naming both versions', async () => {
    readAlone = (item) => ({ ...item, updated_at: '2026-01-01T10:00:01.000Z', renewed_at: '2026-02-01T08:30:00.000Z' })
    const read = await readById()
    assert.equal(read.status, 'fails_closed', read.detail)
    assert.match(read.detail, /version "2026-01-01T10:00:00Z", the read by id "2026-01-01T10:00:01.000Z"/)
    assert.deepEqual(read.config_keys, ['connector.get'])
  })

  test('another instant of a timestamp field, or another value, still fails closed, naming the field', async () => {
    readAlone = (item) => ({ ...item, updated_at: '2026-01-01T10:00:00.000Z', renewed_at: '2026-02-01T09:30:00.000Z' })
    const instant = await readById()
    assert.equal(instant.status, 'fails_closed', instant.detail)
    assert.match(instant.detail, /field\(s\) renewed_at differ/)
    readAlone = (item) => ({ ...item, updated_at: '2026-01-01T10:00:00.000Z', amount: 6 })
    const value = await readById()
    assert.equal(value.status, 'fails_closed', value.detail)
    assert.match(value.detail, /field\(s\) amount differ/)
  })
})

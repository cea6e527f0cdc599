import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { checkResource } from '../../../src/checks/index.js'
import { createHttpConnector } from '../../../src/connectors/http/index.js'
import { createCursorCodec, searchAll } from '../../../src/inventory/index.js'
import { httpResource } from './fixtures.js'
import { sendJson, startUpstream, type TestUpstream } from './upstream-server.js'

/**
 * An http upstream sending `renewed_at` in its local time without an offset ("2024-06-01T09:00:00" from a
 * Europe/Berlin API is 07:00Z). The README: "a time without a zone is refused as ambiguous", a stored value not of
 * its declared type "is never guessed". The http connector read such a value as UTC: `renewed_at < 08:00Z`
 * answered 3 records with complete: true (the right answer for a +02:00 API is 5), and `warrant check` said
 * declared_fields holds. Now the value is mistyped: the records are counted as not judged, the answer is not
 * complete, and the check names the field. (SQLite's zoneless spelling, read by the sql connector, is still UTC.)
 */
const ITEMS = Array.from({ length: 8 }, (_, i) => ({ id: `r${i}`, status: 'active', renewed_at: `2024-06-01T${String(i + 5).padStart(2, '0')}:00:00`, version: 1 }))
const codec = createCursorCodec({ key: randomBytes(32) })
const scope = { resource: 'items', environment: 'probe', visibility: 'all items', restricted: false }

describe('an http timestamp without a zone (real loopback upstream)', () => {
  let up: TestUpstream
  before(async () => {
    up = await startUpstream((req, res) => {
      const get = /^\/items\/([^/]+)$/.exec(req.url.pathname)
      if (get) return sendJson(res, 200, ITEMS.find((i) => i.id === get[1]))
      const from = Number(req.url.searchParams.get('offset') ?? 0)
      const size = Number(req.url.searchParams.get('limit') ?? 10)
      sendJson(res, 200, { items: ITEMS.slice(from, from + size) })
    })
  })
  after(() => up.close())
  const config = () =>
    httpResource(
      { sources: [{ name: 'main', base_url: up.origin }], list: { path: '/items', page_size_param: 'limit', pagination: { style: 'offset' } } },
      { fields: { id: 'string', status: 'string', renewed_at: 'timestamp', version: 'integer' } },
    )

  test('a filter on it is not answered complete by guessing UTC', async () => {
    const env = await searchAll(createHttpConnector({ resource: config() }), { resource: 'items', filter: { renewed_at: { lt: '2024-06-01T08:00:00Z' } }, pageSize: 10 }, {}, { scope, cursorCodec: codec })
    assert.equal(env.complete, false, `complete: ${env.complete}, ${env.items.length} items (${env.items.map((i) => i.fields['renewed_at']).join(', ')}): the zoneless values were read as UTC`)
    assert.equal(env.items.length, 0, 'no zoneless value is compared at a guessed instant')
  })

  test('warrant check does not say every field has its declared type', async () => {
    const c = config()
    const report = await checkResource({ name: 'items', config: c, connector: createHttpConnector({ resource: c }), pages: 2, pageSize: 10 })
    const declared = report.guarantees.find((g) => g.name === 'declared_fields')!
    assert.notEqual(declared.status, 'holds', `declared_fields: ${declared.detail}`)
    assert.match(declared.detail, /renewed_at/)
  })
})

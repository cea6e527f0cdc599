import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { parseConfig } from '../../../src/config/index.js'
import { createHttpConnector } from '../../../src/connectors/http/index.js'
import { httpResource, idsOf, walk } from './fixtures.js'
import { sendJson, startUpstream, type TestUpstream } from './upstream-server.js'

// A CouchDB-shaped upstream: each row wraps the document (`rows[].doc`), the id and revision are `_id` and
// `_rev`, and the fields the config declares live in nested objects under other names.
interface Doc {
  readonly _id: string
  readonly _rev: string
  readonly meta: { readonly state: string }
  readonly billing: { readonly amount: number }
  readonly internal: string
}

const DOCS: Doc[] = Array.from({ length: 7 }, (_, i) => ({
  _id: `doc-${i + 1}`,
  _rev: `${i + 1}-abc${i}`,
  meta: { state: i % 2 === 0 ? 'past_due' : 'active' },
  billing: { amount: (i + 1) * 100 },
  internal: 'not declared',
}))

const COUCH_FIELDS = {
  field_paths: { id: '_id', version: '_rev', status: 'meta.state', amount: 'billing.amount' },
  version: { from: 'field', field: 'version' },
}
const COUCH_TYPES = { fields: { id: 'string', status: 'string', amount: 'number', version: 'string' } }

describe('record path and field paths (wrapped rows, nested fields)', () => {
  let upstream: TestUpstream
  before(async () => {
    upstream = await startUpstream((req, res) => {
      if (req.url.pathname === '/db/_all_docs') {
        const skip = Number(req.url.searchParams.get('skip') ?? 0)
        const limit = Number(req.url.searchParams.get('limit') ?? 3)
        const rows = DOCS.slice(skip, skip + limit).map((doc) => ({ id: doc._id, key: doc._id, value: { rev: doc._rev }, doc }))
        return sendJson(res, 200, { total_rows: DOCS.length, offset: skip, rows })
      }
      const doc = DOCS.find((d) => `/db/${d._id}` === req.url.pathname)
      if (doc) return sendJson(res, 200, { data: doc })
      return sendJson(res, 404, { error: 'not_found' })
    })
  })
  after(() => upstream.close())

  const couch = (overrides: Record<string, unknown> = {}) =>
    createHttpConnector({
      resource: httpResource(
        {
          sources: [{ name: 'couch', base_url: upstream.origin }],
          ...COUCH_FIELDS,
          get: { path: '/db/{id}', record_path: 'data' },
          list: {
            path: '/db/_all_docs',
            query: { include_docs: 'true' },
            page_size_param: 'limit',
            pagination: { style: 'offset', offset_param: 'skip' },
            items_path: 'rows',
            record_path: 'doc',
            total_path: 'total_rows',
          },
          ...overrides,
        },
        COUCH_TYPES,
      ),
    })

  it('walks wrapped rows and reads each declared field at its nested path, by its declared name', async () => {
    const { records } = await walk(couch(), 'couch', 3)
    assert.deepEqual(idsOf(records), DOCS.map((d) => d._id))
    assert.deepEqual(records[0], { id: 'doc-1', version: '1-abc0', fields: { id: 'doc-1', status: 'past_due', amount: 100, version: '1-abc0' } })
    // undeclared members of the document never become fields
    assert.ok(records.every((r) => !('internal' in r.fields) && !('_id' in r.fields)))
  })

  it('filters on a nested field through its declared name', async () => {
    const { records } = await walk(couch(), 'couch', 3, { status: 'active', amount: { gte: 300 } })
    assert.deepEqual(idsOf(records), ['doc-4', 'doc-6'])
  })

  it('reads a record by id under get.record_path', async () => {
    const result = await couch().readByIds(['doc-3', 'doc-404'])
    assert.deepEqual(result.records.get('doc-3'), { id: 'doc-3', version: '3-abc2', fields: { id: 'doc-3', status: 'past_due', amount: 300, version: '3-abc2' } })
    assert.deepEqual(result.missing, ['doc-404'])
    assert.deepEqual(result.failed, [])
  })

  it('a record_path that finds no object: every item is counted as unjudged, none is kept', async () => {
    const session = await couch({ list: { path: '/db/_all_docs', pagination: { style: 'offset', offset_param: 'skip' }, items_path: 'rows', record_path: 'document' } }).openSession()
    const page = await session.readPage({ source: 'couch', filter: {}, position: null, pageSize: 3 })
    assert.equal(page.kind, 'page')
    assert.deepEqual(page.kind === 'page' && { items: page.items.length, unjudged: page.unjudged }, { items: 0, unjudged: { count: 3, absent: ['id'], mistyped: [] } })
  })

  it('a wrong id path: the records are unjudged, and a read by id names the field and the path it looked at', async () => {
    const connector = couch({ field_paths: { ...COUCH_FIELDS.field_paths, id: 'meta._id' } })
    const page = await (await connector.openSession()).readPage({ source: 'couch', filter: {}, position: null, pageSize: 3 })
    assert.deepEqual(page.kind === 'page' && page.unjudged, { count: 3, absent: ['id'], mistyped: [] })
    const read = await connector.readByIds(['doc-1'])
    assert.match(read.failed[0]?.message ?? '', /no usable id field "id" at "meta\._id"/)
  })
})

describe('field path configuration errors name the key and the fix', () => {
  const config = (connector: Record<string, unknown>) => ({
    resources: {
      docs: {
        environment: { name: 'test' },
        connector: {
          kind: 'http',
          sources: [{ name: 'a', base_url: 'http://127.0.0.1:9' }],
          list: { path: '/docs', pagination: { style: 'cursor' } },
          get: { path: '/docs/{id}' },
          version: { from: 'field', field: 'version' },
          ...connector,
        },
        fields: { id: 'string', status: 'string', version: 'string' },
        review_fields: ['id', 'status'],
      },
    },
  })

  it('a path for an undeclared field', () => {
    assert.throws(() => parseConfig(config({ field_paths: { state: 'meta.state' } })), {
      code: 'invalid_request',
      message: /resources\.docs\.connector\.field_paths\.state: unknown field "state" \(declared fields: id, status, version\)/,
    })
  })

  it('a path with an empty segment', () => {
    assert.throws(() => parseConfig(config({ field_paths: { status: 'meta..state' } })), {
      message: /resources\.docs\.connector\.field_paths\.status: a dotted path such as "doc\.state"/,
    })
  })

  it('a record path with an empty segment', () => {
    assert.throws(() => parseConfig(config({ list: { path: '/docs', pagination: { style: 'cursor' }, record_path: 'doc.' } })), {
      message: /resources\.docs\.connector\.list\.record_path/,
    })
  })

  it('a version field that is not declared', () => {
    assert.throws(() => parseConfig(config({ version: { from: 'field', field: 'rev' } })), {
      message: /resources\.docs\.connector\.version\.field: unknown field "rev"/,
    })
  })

  it('the id field declared as absent-means-null', () => {
    assert.throws(() => parseConfig(config({ absent_means_null: ['id'] })), {
      message: /connector\.absent_means_null\.0: the id field can never be absent/,
    })
  })
})

import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { describe, test } from 'node:test'
import { checkResource } from '../../../src/checks/index.js'
import { envelopeSchema } from '../../../src/contract/index.js'
import { createHttpConnector } from '../../../src/connectors/http/index.js'
import { createCursorCodec, searchAll } from '../../../src/inventory/index.js'
import { collection, httpResource } from './fixtures.js'
import { sendJson, startUpstream } from './upstream-server.js'

// An id_field that names no one record (`status`, a customer id on an orders list): two records of one page under
// one id are one record to every reader after it, so the second was dropped as "already read" and the walk said
// the records "moved while the walk was reading it", pointing at a retry that finds the same. One answer holding
// two different records under one id proves the id is not unique: the walk is not complete and names id_field.
const codec = createCursorCodec({ key: randomBytes(32) })
const scope = { resource: 'items', environment: 'test-upstream', visibility: 'all items', restricted: false }

async function withUpstream<T>(items: readonly unknown[], run: (origin: string) => Promise<T>): Promise<T> {
  const up = await startUpstream((req, res) => {
    const from = Number(req.url.searchParams.get('offset') ?? 0)
    sendJson(res, 200, { items: items.slice(from, from + Number(req.url.searchParams.get('limit') ?? 10)) })
  })
  try {
    return await run(up.origin)
  } finally {
    await up.close()
  }
}

const resourceOf = (origin: string, idField: string) =>
  httpResource({ sources: [{ name: 'main', base_url: origin }], list: { path: '/items', page_size_param: 'limit', pagination: { style: 'offset' } } }, { id_field: idField })
const search = (origin: string, idField: string) =>
  searchAll(createHttpConnector({ resource: resourceOf(origin, idField) }), { resource: 'items', filter: {}, pageSize: 10 }, { maxPages: 20, deadlineMs: 10_000 }, { scope, cursorCodec: codec }).then((e) => envelopeSchema.parse(e))

describe('an id_field that is not unique', () => {
  test('two different records of one page under one id: not complete, naming id_field (was: "moved while the walk was reading it")', async () => {
    const env = await withUpstream(collection(5), (origin) => search(origin, 'status'))
    assert.equal(env.complete, false)
    const reason = env.incomplete_reasons.find((r) => r.code === 'SOURCE_UNAVAILABLE')
    assert.ok(reason?.message?.includes('id_field "status"'), JSON.stringify(env.incomplete_reasons))
    assert.ok(reason?.message?.includes('not unique'), reason?.message)
    assert.ok(!env.incomplete_reasons.some((r) => r.message?.includes('moved while the walk')), JSON.stringify(env.incomplete_reasons))
  })

  test('warrant check does not pass it, and names id_field', async () => {
    await withUpstream(collection(5), async (origin) => {
      const config = resourceOf(origin, 'status')
      const report = await checkResource({ name: 'items', config, connector: createHttpConnector({ resource: config }), pages: 2, pageSize: 10 })
      assert.notEqual(report.verdict, 'holds')
      assert.ok(report.guarantees.some((g) => g.config_keys.includes('id_field') && g.status !== 'holds'), JSON.stringify(report.guarantees))
    })
  })

  test('the same record twice in one answer (identical copies) is one record, as before: the copy is dropped and said', async () => {
    const items = collection(5)
    const env = await withUpstream([...items.slice(0, 3), items[2], ...items.slice(3)], (origin) => search(origin, 'id'))
    assert.equal(env.items.length, 5)
    assert.ok(!env.incomplete_reasons.some((r) => r.message?.includes('not unique')), JSON.stringify(env.incomplete_reasons))
    assert.ok(env.warnings.some((w) => w.code === 'ORDER_FALLBACK'))
  })

  test('a unique id field: complete, as before', async () => {
    const env = await withUpstream(collection(25), (origin) => search(origin, 'id'))
    assert.equal(env.complete, true, JSON.stringify(env.incomplete_reasons))
    assert.equal(env.items.length, 25)
  })
})

describe('rows around a record (record_path)', () => {
  test('two view rows of one document (CouchDB, a view emitting twice: rows differ by key, the doc is the same): one record, not an id_field refusal', async () => {
    const docs = collection(3)
    const rows = [
      { id: docs[0]!.id, key: 'a', doc: docs[0] },
      { id: docs[0]!.id, key: 'b', doc: docs[0] },
      { id: docs[1]!.id, key: 'c', doc: docs[1] },
      { id: docs[2]!.id, key: 'd', doc: docs[2] },
    ]
    const up = await startUpstream((req, res) => {
      const from = Number(req.url.searchParams.get('offset') ?? 0)
      sendJson(res, 200, { rows: rows.slice(from, from + Number(req.url.searchParams.get('limit') ?? 10)) })
    })
    try {
      const resource = httpResource({ sources: [{ name: 'main', base_url: up.origin }], list: { path: '/items', items_path: 'rows', record_path: 'doc', page_size_param: 'limit', pagination: { style: 'offset' } } })
      const env = envelopeSchema.parse(await searchAll(createHttpConnector({ resource }), { resource: 'items', filter: {}, pageSize: 10 }, { maxPages: 20, deadlineMs: 10_000 }, { scope, cursorCodec: codec }))
      assert.equal(env.items.length, 3)
      assert.ok(!env.incomplete_reasons.some((r) => r.message?.includes('not unique')), JSON.stringify(env.incomplete_reasons))
    } finally {
      await up.close()
    }
  })
})

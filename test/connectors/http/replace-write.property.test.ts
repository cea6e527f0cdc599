import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import fc from 'fast-check'
import { createHttpConnector } from '../../../src/connectors/http/index.js'
import { resourceSchema } from '../../../src/config/schema.js'
import { sendJson, startUpstream, type TestUpstream } from './upstream-server.js'

/**
 * The replacing write (read-modify-write of the whole document) on a real loopback server whose PUT replaces
 * the stored document with the body, CouchDB-style (`_rev` in the body, 409 when stale). Whatever the record
 * holds besides the declared fields, nested or not, after the write every field outside the set is byte for
 * byte what it was.
 */
describe('replacing write: property', () => {
  let upstream: TestUpstream
  /** id → the stored document's JSON text */
  const docs = new Map<string, string>()
  let revs = 0

  before(async () => {
    upstream = await startUpstream((req, res) => {
      const m = /^\/docs\/([^/]+)$/.exec(req.url.pathname)
      const id = m ? decodeURIComponent(m[1]!) : ''
      const stored = docs.get(id)
      if (stored === undefined) return sendJson(res, 404, { error: 'not_found' })
      if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'application/json' })
        return res.end(stored)
      }
      if (req.method !== 'PUT') return sendJson(res, 405, { error: 'method' })
      const current = JSON.parse(stored) as { _rev: string }
      const body = JSON.parse(req.body) as Record<string, unknown>
      const sent = req.url.searchParams.get('rev') ?? body._rev
      if (sent !== current._rev) return sendJson(res, 409, { error: 'conflict' })
      const rev = `${++revs}-x`
      docs.set(id, JSON.stringify(Object.assign(body, { _rev: rev })))
      return sendJson(res, 201, { ok: true, id, rev })
    })
  })
  after(() => upstream.close())

  const resource = () =>
    resourceSchema.parse({
      environment: { name: 'prop' },
      connector: {
        kind: 'http',
        sources: [{ name: 'main', base_url: upstream.origin }],
        list: { path: '/docs', pagination: { style: 'cursor' } },
        get: { path: '/docs/{id}' },
        version: { from: 'field', field: '_rev' },
        field_paths: { state: 'meta.state' },
      },
      fields: { _id: 'string', _rev: 'string', status: 'string', state: 'string' },
      id_field: '_id',
      review_fields: ['_id', 'status'],
    })

  const declared = new Set(['_id', '_rev', 'status', 'meta'])
  const extraKey = fc.string({ minLength: 1, maxLength: 12 }).filter((k) => !declared.has(k))
  const extra = fc.dictionary(extraKey, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 8 })
  const metaExtra = fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }).filter((k) => k !== 'state'), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 })
  const text = fc.string({ maxLength: 20 })

  test('after the write, every field outside the set is byte for byte what it was; the set fields hold', async () => {
    const connector = createHttpConnector({ resource: resource() })
    let n = 0
    await fc.assert(
      fc.asyncProperty(extra, metaExtra, text, text, text, async (others, meta, status, state, newStatus) => {
        const id = `d${++n}`
        const original = { _id: id, _rev: `0-${n}`, status, ...others, meta: { ...meta, state } }
        docs.set(id, JSON.stringify(original))
        const before = JSON.parse(docs.get(id)!) as Record<string, unknown>

        const read = await connector.readByIds([id])
        const current = read.records.get(id)
        assert.ok(current, JSON.stringify(read.failed))
        const set = { status: newStatus, state: `${state}!` }
        const outcome = await connector.write({
          id,
          expectedVersion: current.version,
          set,
          precondition: {},
          current,
          http: { method: 'PUT', path: `/docs/${encodeURIComponent(id)}`, ifMatch: false, style: 'replace', version: { in: 'body', path: '_rev' } },
        })
        assert.equal(outcome.kind, 'written', JSON.stringify(outcome))

        const afterDoc = JSON.parse(docs.get(id)!) as Record<string, unknown>
        assert.deepEqual(Object.keys(afterDoc), Object.keys(before), 'no field vanished or appeared, in the same order')
        for (const key of Object.keys(before)) {
          if (key === 'status' || key === '_rev' || key === 'meta') continue
          assert.equal(JSON.stringify(afterDoc[key]), JSON.stringify(before[key]), `field ${JSON.stringify(key)}`)
        }
        const [metaBefore, metaAfter] = [before.meta as Record<string, unknown>, afterDoc.meta as Record<string, unknown>]
        assert.deepEqual(Object.keys(metaAfter), Object.keys(metaBefore))
        for (const key of Object.keys(metaBefore)) if (key !== 'state') assert.equal(JSON.stringify(metaAfter[key]), JSON.stringify(metaBefore[key]), `meta.${key}`)
        assert.equal(afterDoc.status, newStatus)
        assert.equal(metaAfter.state, `${state}!`)
      }),
      { numRuns: 150 },
    )
    await connector.close()
  })

  test('the version as a query parameter, and a record without its representation is never replaced', async () => {
    const connector = createHttpConnector({ resource: resource() })
    docs.set('q', JSON.stringify({ _id: 'q', _rev: '5-q', status: 'active', meta: { state: 'on', n: [1] } }))
    const current = (await connector.readByIds(['q'])).records.get('q')!
    assert.equal(JSON.stringify(current).includes('"n"'), false, 'the representation never reaches JSON')
    const http = { method: 'PUT', path: '/docs/q', ifMatch: false, style: 'replace', version: { in: 'query', param: 'rev' } } as const
    const outcome = await connector.write({ id: 'q', expectedVersion: current.version, set: { status: 'paused' }, precondition: {}, current, http })
    assert.equal(outcome.kind, 'written')
    assert.equal(upstream.seen.at(-1)!.rawUrl, '/docs/q?rev=5-q')
    assert.deepEqual(JSON.parse(docs.get('q')!).meta, { state: 'on', n: [1] })
    const copy = { ...current }
    await assert.rejects(connector.write({ id: 'q', expectedVersion: '6-q', set: { status: 'x' }, precondition: {}, current: copy, http }), /needs the record as re-read just before it/)
    await connector.close()
  })

  test('a stale revision is refused by the upstream (409): a conflict, and the document is untouched', async () => {
    const connector = createHttpConnector({ resource: resource() })
    docs.set('stale', JSON.stringify({ _id: 'stale', _rev: '1-a', status: 'active', meta: { state: 'on' }, keep: [1, { x: null }] }))
    const current = (await connector.readByIds(['stale'])).records.get('stale')!
    // another client writes in between
    docs.set('stale', JSON.stringify({ _id: 'stale', _rev: '2-b', status: 'active', meta: { state: 'on' }, keep: [2] }))
    const stored = docs.get('stale')
    const outcome = await connector.write({
      id: 'stale',
      expectedVersion: current.version,
      set: { status: 'paused' },
      precondition: {},
      current,
      http: { method: 'PUT', path: '/docs/stale', ifMatch: false, style: 'replace', version: { in: 'body', path: '_rev' } },
    })
    assert.equal(outcome.kind, 'conflict')
    assert.equal(docs.get('stale'), stored)
    await connector.close()
  })
})

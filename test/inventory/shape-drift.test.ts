import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { decide, envelopeSchema, type Filter } from '../../src/contract/index.js'
import { createHttpConnector } from '../../src/connectors/http/index.js'
import { createCursorCodec, searchAll } from '../../src/inventory/index.js'
import { httpResource } from '../connectors/http/fixtures.js'
import { sendJson, startUpstream, type TestUpstream } from '../connectors/http/upstream-server.js'

// Issue #8, "false proof of absence": the upstream calls the field `state`, the config says `status`. Every
// status read as null, the filter matched nothing, and the answer was "complete, 0 records: absence proven".
// Now a record that does not carry a declared field cannot be judged, and the walk says so.
const codec = createCursorCodec({ key: randomBytes(32) })
const scope = { resource: 'items', environment: 'drift-test', visibility: 'all items', restricted: false }

type Row = Record<string, unknown> | string
const renamed = (i: number): Row => ({ id: `s${String(i).padStart(3, '0')}`, state: i % 2 === 0 ? 'past_due' : 'active', amount: i, version: 1 })

describe('schema drift and malformed items against the declared fields (real loopback upstream)', () => {
  let upstream: TestUpstream
  const served = new Map<string, Row[]>()
  before(async () => {
    upstream = await startUpstream((req, res) => {
      const rows = served.get(req.url.pathname)
      if (!rows) {
        const one = [...served.values()].flat().find((r) => typeof r === 'object' && req.url.pathname.endsWith(`/${String(r['id'])}`))
        return one ? sendJson(res, 200, one) : sendJson(res, 404, { error: 'no such record' })
      }
      const start = Number(req.url.searchParams.get('cursor') ?? 0)
      const page = rows.slice(start, start + 4)
      sendJson(res, 200, { items: page, next_cursor: start + 4 < rows.length ? String(start + 4) : null })
    })
    served.set('/renamed', Array.from({ length: 10 }, (_, i) => renamed(i)))
    served.set('/malformed', [
      { id: 'm1', status: 'past_due', amount: 1, version: 1 },
      { status: 'past_due', amount: 2, version: 1 },
      { id: 'm3', status: 'past_due', amount: 3 },
      { id: '', status: 'past_due', amount: 4, version: 1 },
      { id: 'm5', status: 'past_due', amount: '5.00', version: 1 },
      { id: 'm6', status: null, amount: 6, version: 1 },
      'not an object',
    ])
    served.set('/nulls', [
      { id: 'n1', status: 'past_due', amount: 1, version: 1, owner: null },
      { id: 'n2', status: 'past_due', amount: 2, version: 1 },
      { id: 'n3', status: 'past_due', amount: 3, version: 1, owner: 'ana' },
    ])
  })
  after(() => upstream.close())

  const connector = (path: string, extra: Record<string, unknown> = {}, fields?: Record<string, string>) =>
    createHttpConnector({
      resource: httpResource(
        { sources: [{ name: 'main', base_url: upstream.origin }], list: { path, pagination: { style: 'cursor' } }, ...extra },
        fields ? { fields } : {},
      ),
    })
  const search = (path: string, filter: Filter, extra: Record<string, unknown> = {}, fields?: Record<string, string>) =>
    searchAll(connector(path, extra, fields), { resource: 'items', filter, pageSize: 4 }, {}, { scope, cursorCodec: codec }).then((e) => envelopeSchema.parse(e))

  test('the upstream calls it `state`, the config says `status`: not complete, SHAPE_MISMATCH names status and counts every record', async () => {
    const envelope = await search('/renamed', { status: 'past_due' })
    assert.equal(envelope.complete, false)
    assert.deepEqual(envelope.items, [])
    assert.deepEqual(
      envelope.incomplete_reasons.map((r) => ({ code: r.code, fields: r.fields, record_count: r.record_count, source: r.source })),
      [{ code: 'SHAPE_MISMATCH', fields: ['status'], record_count: 10, source: 'main' }],
    )
    assert.match(envelope.incomplete_reasons[0]!.message, /10 record\(s\) of source "main" lacked declared field\(s\) status/)
    for (const use of ['prove_absence', 'change_from_absence'] as const) assert.equal(decide(envelope, use).decision, 'refuse_or_request_review', use)
  })

  test('a filter that does not read the missing field is still not complete: the records are not judged at all', async () => {
    const envelope = await search('/renamed', { amount: { gte: 0 } })
    assert.equal(envelope.complete, false)
    assert.equal(envelope.items.length, 0)
    assert.equal(envelope.incomplete_reasons[0]?.record_count, 10)
  })

  test('field_paths maps the declared name to the upstream one: complete, and the filter works', async () => {
    const envelope = await search('/renamed', { status: 'past_due' }, { field_paths: { status: 'state' } })
    assert.equal(envelope.complete, true, JSON.stringify(envelope.incomplete_reasons))
    assert.deepEqual(
      envelope.items.map((i) => i['id']),
      ['s000', 's002', 's004', 's006', 's008'],
    )
  })

  test('items without id, without version, with a mistyped field or not an object are counted, never kept, never silently dropped', async () => {
    const envelope = await search('/malformed', {})
    assert.deepEqual(
      envelope.items.map((i) => i['id']),
      ['m1', 'm6'],
    )
    assert.equal(envelope.complete, false)
    const reason = envelope.incomplete_reasons.find((r) => r.code === 'SHAPE_MISMATCH')
    assert.equal(reason?.record_count, 5)
    assert.deepEqual(reason?.fields, ['amount', 'id', 'version'])
    assert.match(reason?.message ?? '', /lacked declared field\(s\) id, version or carried field\(s\) amount with another type than declared/)
  })

  test('absent and null differ: a present null is a value; absence is unjudgeable unless the config says it means null', async () => {
    const fields = { id: 'string', status: 'string', amount: 'number', version: 'integer', owner: 'string' }
    const strict = await search('/nulls', { owner: { is_null: true } }, {}, fields)
    assert.deepEqual(
      strict.items.map((i) => i['id']),
      ['n1'],
    )
    assert.deepEqual(strict.incomplete_reasons.map((r) => [r.code, r.fields, r.record_count]), [['SHAPE_MISMATCH', ['owner'], 1]])

    const lenient = await search('/nulls', { owner: { is_null: true } }, { absent_means_null: ['owner'] }, fields)
    assert.equal(lenient.complete, true)
    assert.deepEqual(
      lenient.items.map((i) => [i['id'], (i['fields'] as Record<string, unknown>)['owner']]),
      [
        ['n1', null],
        ['n2', null],
      ],
    )
  })

  test('the count carries across the parts of a walk resumed by its cursor', async () => {
    const conn = connector('/renamed')
    const first = await searchAll(conn, { resource: 'items', filter: {}, pageSize: 4 }, { maxPages: 1 }, { scope, cursorCodec: codec })
    assert.deepEqual(first.incomplete_reasons.map((r) => [r.code, r.record_count]), [
      ['SHAPE_MISMATCH', 4],
      ['CLIENT_LIMIT_REACHED', undefined],
    ])
    const cursor = first.continuation?.kind === 'next_cursor' ? first.continuation.cursor : assert.fail('no cursor')
    const rest = await searchAll(conn, { resource: 'items', filter: {}, pageSize: 4, cursor }, {}, { scope, cursorCodec: codec })
    assert.deepEqual(rest.incomplete_reasons.map((r) => [r.code, r.record_count, r.fields]), [['SHAPE_MISMATCH', 10, ['status']]])
  })

  test('a record read by id that lacks a declared field fails, naming the field and the fix', async () => {
    const result = await connector('/renamed').readByIds(['s001'])
    assert.equal(result.records.size, 0)
    assert.match(result.failed[0]?.message ?? '', /record "s001" lacks declared field\(s\) "status".*field_paths.*absent_means_null/)
  })
})

import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { createHttpConnector } from '../../../src/connectors/http/index.js'
import { envelopeSchema, type Filter } from '../../../src/contract/index.js'
import { createCursorCodec, searchAll } from '../../../src/inventory/index.js'
import { httpResource } from './fixtures.js'
import { sendJson, startUpstream, type SeenRequest, type TestUpstream } from './upstream-server.js'

// What a list request sends for the filter clauses it delegates, against an upstream that reads them the way
// many do: `owner=a,b` split on every comma, and timestamps compared as text against its own UTC spelling.
// A value the declared encoding cannot carry faithfully is not sent (the clause is applied here); a timestamp
// is sent as one UTC spelling, whatever spelling the caller used. Either way the answer stays exact.
const ITEMS = [
  { id: 'a1', owner: 'Smith, Jane', status: 'active', updated_at: '2024-06-01T13:00:00Z', version: 1 },
  { id: 'a2', owner: 'Doe, John', status: 'paused', updated_at: '2024-06-01T09:00:00Z', version: 1 },
  { id: 'a3', owner: 'Lee', status: 'active', updated_at: '2024-06-02T08:00:00Z', version: 1 },
  { id: 'a4', owner: 'Doe', status: 'active', updated_at: '2024-05-30T08:00:00Z', version: 1 },
]
type Row = (typeof ITEMS)[number]

interface Wanted {
  readonly owner?: string
  readonly status?: string
  readonly after?: string
  readonly before?: string
}

/** The upstream's own reading: a comma list split on every comma, timestamps compared as text. */
function matching(wanted: Wanted): Row[] {
  return ITEMS.filter(
    (i) =>
      (wanted.owner === undefined || wanted.owner.split(',').includes(i.owner)) &&
      (wanted.status === undefined || i.status === wanted.status) &&
      (wanted.after === undefined || i.updated_at >= wanted.after) &&
      (wanted.before === undefined || i.updated_at < wanted.before),
  )
}

const codec = createCursorCodec({ key: randomBytes(32) })
const scope = { resource: 'items', environment: 'list-request', visibility: 'all items', restricted: false }
const fields = { id: 'string', owner: 'string', status: 'string', updated_at: 'timestamp', version: 'integer' }

describe('http list request: what a delegated clause sends (real loopback upstream)', () => {
  let upstream: TestUpstream
  before(async () => {
    upstream = await startUpstream((req, res) => {
      const q = req.url.searchParams
      if (req.url.pathname === '/people') {
        // keyset on the id (start_after) or offset paging; a filtered total
        const rows = matching({
          ...(q.has('owner') ? { owner: q.get('owner')! } : {}),
          ...(q.has('status') ? { status: q.get('status')! } : {}),
          ...(q.has('updated_after') ? { after: q.get('updated_after')! } : {}),
        })
        const limit = Number(q.get('limit'))
        const from = q.has('start_after') ? rows.filter((r) => r.id <= q.get('start_after')!).length : Number(q.get('offset') ?? 0)
        return sendJson(res, 200, { items: rows.slice(from, from + limit), total: rows.length })
      }
      if (req.url.pathname === '/search') {
        // POST search: the filter, size and cursor in the JSON body, keyset on the id
        const body = JSON.parse(req.body) as { owner?: string; updated_before?: string; size: number; after?: string }
        const rows = matching({
          ...(body.owner === undefined ? {} : { owner: body.owner }),
          ...(body.updated_before === undefined ? {} : { before: body.updated_before }),
        }).filter((r) => body.after === undefined || r.id > body.after)
        return sendJson(res, 200, { results: rows.slice(0, body.size) })
      }
      return sendJson(res, 404, { error: 'no such path' })
    })
  })
  after(() => upstream.close())

  const search = (list: Record<string, unknown>, filter: Filter) =>
    searchAll(
      createHttpConnector({ resource: httpResource({ sources: [{ name: 'main', base_url: upstream.origin }], list }, { fields, review_fields: ['id', 'owner'] }) }),
      { resource: 'items', filter, pageSize: 2 },
      {},
      { scope, cursorCodec: codec },
    ).then((e) => envelopeSchema.parse(e))
  const idsOf = (envelope: { items: readonly Record<string, unknown>[] }) => envelope.items.map((i) => i['id'])
  const sent = (param: string) => upstream.seen.map((r: SeenRequest) => r.url.searchParams.get(param))

  const people = (extra: Record<string, unknown>) => ({
    path: '/people',
    page_size_param: 'limit',
    items_path: 'items',
    upstream_filters: [
      { field: 'owner', op: 'in', param: 'owner', encoding: 'comma' },
      { field: 'status', op: 'eq', param: 'status' },
      { field: 'updated_at', op: 'gte', param: 'updated_after' },
    ],
    pagination: { style: 'keyset', param: 'start_after' },
    ...extra,
  })

  it('an "in" value holding a comma is not sent as a comma list: the clause is applied here, and the proven answer is exact', async () => {
    upstream.seen.length = 0
    const envelope = await search(people({}), { owner: { in: ['Smith, Jane', 'Doe, John'] } })
    assert.deepEqual(idsOf(envelope), ['a1', 'a2'])
    assert.equal(envelope.complete, true)
    assert.equal(envelope.scope.stability, 'proven')
    assert.ok(sent('owner').every((v) => v === null), `owner was sent: ${JSON.stringify(sent('owner'))}`)
  })

  it('the other clauses still go upstream, and a filtered total no longer counts this query (it is not taken to end the walk)', async () => {
    upstream.seen.length = 0
    const envelope = await search(people({ total_path: 'total', pagination: { style: 'offset' } }), { owner: { in: ['Smith, Jane', 'Doe, John'] }, status: 'active' })
    assert.deepEqual(idsOf(envelope), ['a1'])
    assert.equal(envelope.complete, true)
    assert.ok(sent('status').every((v) => v === 'active'))
    assert.ok(sent('owner').every((v) => v === null))
  })

  it('values without a comma still go upstream as one comma list', async () => {
    upstream.seen.length = 0
    const envelope = await search(people({}), { owner: { in: ['Lee', 'Doe'] } })
    assert.deepEqual(idsOf(envelope), ['a3', 'a4'])
    assert.equal(envelope.complete, true)
    assert.equal(sent('owner')[0], 'Lee,Doe')
  })

  it('a timestamp goes upstream as its UTC spelling, so an upstream comparing text keeps the 13:00Z record for >= 14:00+02:00', async () => {
    upstream.seen.length = 0
    const envelope = await search(people({}), { updated_at: { gte: '2024-06-01T14:00:00+02:00' } })
    assert.deepEqual(idsOf(envelope), ['a1', 'a3'])
    assert.equal(envelope.complete, true)
    assert.equal(sent('updated_after')[0], '2024-06-01T12:00:00.000Z')
  })

  const search_ = {
    path: '/search',
    method: 'POST',
    body: { owner: '{{filter.owner.in}}', updated_before: '{{filter.updated_at.lt}}', size: '{{page_size}}', after: '{{cursor}}' },
    upstream_filters: [
      { field: 'owner', op: 'in', encoding: 'comma' },
      { field: 'updated_at', op: 'lt' },
    ],
    items_path: 'results',
    pagination: { style: 'keyset', field: 'id' },
  }
  const bodies = () => upstream.seen.map((r) => JSON.parse(r.body) as Record<string, unknown>)

  it('POST body: a comma-list placeholder is left out when a value holds a comma; the answer is exact', async () => {
    upstream.seen.length = 0
    const envelope = await search(search_, { owner: { in: ['Smith, Jane', 'Doe, John'] } })
    assert.deepEqual(idsOf(envelope), ['a1', 'a2'])
    assert.equal(envelope.complete, true)
    assert.ok(bodies().every((b) => !('owner' in b)), `owner was sent: ${JSON.stringify(bodies())}`)
  })

  it('POST body: a timestamp goes as its UTC spelling, so 09:00Z is before 08:30-02:00', async () => {
    upstream.seen.length = 0
    const envelope = await search(search_, { updated_at: { lt: '2024-06-01T08:30:00-02:00' } })
    assert.deepEqual(idsOf(envelope), ['a2', 'a4'])
    assert.equal(envelope.complete, true)
    assert.equal(bodies()[0]?.['updated_before'], '2024-06-01T10:30:00.000Z')
  })
})

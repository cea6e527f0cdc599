import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { envelopeSchema } from '../../../src/contract/index.js'
import { createHttpConnector } from '../../../src/connectors/http/index.js'
import { createCursorCodec, searchAll } from '../../../src/inventory/index.js'
import { collection, httpResource, type Item } from './fixtures.js'
import { sendJson, startUpstream, type TestUpstream } from './upstream-server.js'

// Keyset paging holds only where the list is in the order of the key each page starts after. A page whose keys do
// not rise (a record imported late listed among later ones, a list by another field, `after` taken as a position in
// the upstream's own order) is that upstream's own order showing: records listed later under a lower key than a
// page's last are never read. The walk said `complete: true` (stability "unproven"): 24 of 25 over a list by creation
// where r005 showed the order on the first page and r015, listed last, was never read. A page whose keys fall, in the comparison the field's declared type gives (numbers
// by value, timestamps by instant, other strings by code unit), now refuses the source naming pagination.field.
const codec = createCursorCodec({ key: randomBytes(32) })
const scope = { resource: 'items', environment: 'test-upstream', visibility: 'all items', restricted: false }
const items = collection(25)

/** `{data: [...], has_more}` as Stripe writes it; `starting_after` compared as the config's key, or taken as a position. */
async function startKeyset(listed: readonly Item[], after: 'by_id' | 'by_amount' | 'position'): Promise<TestUpstream> {
  return startUpstream((req, res) => {
    const start = req.url.searchParams.get('starting_after')
    const limit = Number(req.url.searchParams.get('limit') ?? 10)
    const rest =
      start === null
        ? listed
        : after === 'by_id'
          ? listed.filter((i) => i.id > start)
          : after === 'by_amount'
            ? listed.filter((i) => i.amount > Number(start))
            : listed.slice(listed.findIndex((i) => i.id === start) + 1)
    sendJson(res, 200, { data: rest.slice(0, limit) })
  })
}

const search = async (origin: string, pagination: Record<string, unknown>, extra: Record<string, unknown> = {}) => {
  const resource = httpResource({ sources: [{ name: 'main', base_url: origin }], list: { path: '/items', items_path: 'data', page_size_param: 'limit', pagination: { style: 'keyset', param: 'starting_after', ...pagination } } }, extra)
  return envelopeSchema.parse(await searchAll(createHttpConnector({ resource }), { resource: 'items', filter: {}, pageSize: 10 }, { maxPages: 20, deadlineMs: 10_000 }, { scope, cursorCodec: codec }))
}
const refusal = (env: ReturnType<typeof envelopeSchema.parse>) => env.incomplete_reasons.find((r) => r.code === 'SOURCE_UNAVAILABLE')?.message ?? ''

describe('a keyset walk over a list not in the order of its key', () => {
  const started: TestUpstream[] = []
  after(async () => {
    for (const up of started) await up.close()
  })
  const start = async (listed: readonly Item[], how: 'by_id' | 'by_amount' | 'position') => {
    const up = await startKeyset(listed, how)
    started.push(up)
    return up
  }

  // r005 shows the order on the first page; r015, listed last, is the record such an order loses
  test('r005 listed after r007 and r015 last, by creation: not complete, naming pagination.field (was complete: true with 24 of 25)', async () => {
    const byCreation = [...items.slice(0, 4), items[5]!, items[6]!, items[4]!, ...items.slice(7, 14), ...items.slice(15), items[14]!]
    const env = await search((await start(byCreation, 'by_id')).origin, {})
    assert.equal(env.complete, false, `complete with ${env.items.length} of 25`)
    assert.notEqual(env.scope.stability, 'proven')
    assert.match(refusal(env), /pagination\.field "id".*"r005".*"r007"/, JSON.stringify(env.incomplete_reasons))
  })

  test('starting_after taken as a position, r005 listed last: the last page falls below its start key, not complete (was complete: true)', async () => {
    const byCreation = [...items.filter((i) => i.id !== 'r005'), items[4]!]
    const env = await search((await start(byCreation, 'position')).origin, {})
    assert.equal(env.complete, false, `complete with ${env.items.length} of 25`)
    assert.match(refusal(env), /pagination\.field "id"/, JSON.stringify(env.incomplete_reasons))
  })

  // a wrong config: the list is by id, and the config pages on `amount`, which does not rise with it
  // it was not complete, but for the wrong reason: SNAPSHOT_INVALIDATED, "records moved", of data standing still
  test('pagination.field amount over a list by id, amounts shuffled: not complete, naming pagination.field (was: blamed on data moving)', async () => {
    const shuffled = items.map((item, i) => ({ ...item, amount: ((i * 7) % 25) * 10 }))
    const env = await search((await start(shuffled, 'by_amount')).origin, { field: 'amount' })
    assert.equal(env.complete, false, `complete with ${env.items.length} of 25`)
    assert.match(refusal(env), /pagination\.field "amount"/, JSON.stringify(env.incomplete_reasons))
  })
})

describe('a keyset walk over a list in the order of its key, as its declared type compares', () => {
  let up: TestUpstream
  const started: TestUpstream[] = []
  before(async () => {
    up = await startKeyset(items, 'by_id')
  })
  after(async () => {
    await up.close()
    for (const s of started) await s.close()
  })

  test('ids in order: complete, proven, every record', async () => {
    const env = await search(up.origin, {})
    assert.equal(env.complete, true, JSON.stringify(env.incomplete_reasons))
    assert.equal(env.scope.stability, 'proven')
    assert.deepEqual(env.items.map((i) => i.id), items.map((i) => i.id))
  })

  // 9 before 10 by value, though "10" < "9" as text
  test('a number field by value: complete', async () => {
    const numbered = items.map((item, i) => ({ ...item, amount: i + 1 }))
    const s = await startKeyset(numbered, 'by_amount')
    started.push(s)
    const env = await search(s.origin, { field: 'amount' })
    assert.equal(env.complete, true, JSON.stringify(env.incomplete_reasons))
    assert.equal(env.items.length, 25)
  })

  // "…T10:00:00+02:00" (08:00Z) before "…T09:00:00Z": rising by instant, falling as text
  test('a timestamp field by instant, offsets mixed: complete', async () => {
    const timed = items.map((item, i) => ({ ...item, created: i % 2 === 0 ? new Date(Date.UTC(2024, 0, 1, 8, i)).toISOString() : `2024-01-01T${String(10).padStart(2, '0')}:${String(i).padStart(2, '0')}:00+02:00` }))
    const s = await startUpstream((req, res) => {
      const after = req.url.searchParams.get('starting_after')
      const rest = after === null ? timed : timed.filter((i) => Date.parse(i.created) > Date.parse(after))
      sendJson(res, 200, { data: rest.slice(0, Number(req.url.searchParams.get('limit') ?? 10)) })
    })
    started.push(s)
    const env = await search(s.origin, { field: 'created' }, { fields: { id: 'string', status: 'string', amount: 'number', version: 'integer', created: 'timestamp' } })
    assert.equal(env.complete, true, JSON.stringify(env.incomplete_reasons))
    assert.equal(env.items.length, 25)
  })
})

import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { checkResource } from '../../src/checks/index.js'
import { createHttpConnector } from '../../src/connectors/http/index.js'
import { collection, httpResource, type Item } from '../connectors/http/fixtures.js'
import { answerItemById, sendJson, startUpstream, type TestUpstream } from '../connectors/http/upstream-server.js'

/**
 * Keyset paging asks for the records after the last key read (`after=r030`), and holds only where the list is in
 * that key's order. An upstream listing in its own order (by creation, with one record imported late: r005 last)
 * answers `after=r030` with nothing, so r005 was never read: the walk said `complete: true`, `stability: proven`,
 * with 29 of 30 records, its keys rising on every page, no id twice, and `warrant check` said every guarantee held.
 * The check now reads the list from its start in one page as large as its sample, and a record there that the keyset
 * pages passed over (still there when read again by id, and missed by a second keyset walk) is `keyset_order`
 * `unsafe`, naming the pagination field.
 */
describe('warrant check on keyset paging over a list in another order than its key', () => {
  const items = collection(30)
  // the upstream's own order: by creation, r005 imported last; `after` filters by id, as the config says
  const byCreation: readonly Item[] = [...items.filter((i) => i.id !== 'r005'), items[4]!]
  let up: TestUpstream
  let inOrder = false
  before(async () => {
    up = await startUpstream((req, res) => {
      if (answerItemById(items, req, res)) return
      const listed = inOrder ? items : byCreation
      const after = req.url.searchParams.get('after')
      const rest = after === null ? listed : listed.filter((i) => i.id > after)
      sendJson(res, 200, { items: rest.slice(0, Number(req.url.searchParams.get('limit') ?? 10)) })
    })
  })
  after(() => up.close())

  const check = (pagination: Record<string, unknown>) => {
    const config = httpResource({ sources: [{ name: 'main', base_url: up.origin }], list: { path: '/items', page_size_param: 'limit', pagination } })
    return checkResource({ name: 'items', config, connector: createHttpConnector({ resource: config }), pageSize: 7, pages: 5 })
  }

  test('a record the keyset pages passed over is unsafe, naming the pagination field (was verdict holds)', async () => {
    inOrder = false
    const report = await check({ style: 'keyset', param: 'after' })
    const g = report.guarantees.find((x) => x.name === 'keyset_order')
    assert.equal(g?.status, 'unsafe', JSON.stringify(report.guarantees, null, 2))
    assert.equal(report.verdict, 'unsafe')
    assert.match(g.detail, /"r005"/)
    assert.ok(g.config_keys.includes('connector.list.pagination.field'), JSON.stringify(g))
  })

  test('a list in the key order holds', async () => {
    inOrder = true
    const report = await check({ style: 'keyset', param: 'after' })
    const g = report.guarantees.find((x) => x.name === 'keyset_order')
    assert.equal(g?.status, 'holds', JSON.stringify(g))
    assert.equal(report.verdict, 'holds', JSON.stringify(report.guarantees, null, 2))
  })

  test('other paging styles count positions in the upstream order: not applicable', async () => {
    const report = await check({ style: 'offset', offset_param: 'after' })
    assert.equal(report.guarantees.find((x) => x.name === 'keyset_order')?.status, 'not_applicable')
  })
})

// Stripe answers a limit above 100 with 400: the one large page is then asked at the sample's own size, against keyset
// pages of half of it, so a consistent upstream still holds (not "could not tell"), and a record passed over within
// that first page is still found.
describe('keyset_order on an upstream refusing a page larger than the sample asked', () => {
  const items = collection(30)
  // listed by creation: r005 created after r007, so listed seventh
  const byCreation: readonly Item[] = [...items.slice(0, 4), items[5]!, items[6]!, items[4]!, ...items.slice(7)]
  let up: TestUpstream
  let inOrder = false
  before(async () => {
    up = await startUpstream((req, res) => {
      if (answerItemById(items, req, res)) return
      const limit = Number(req.url.searchParams.get('limit') ?? 10)
      if (limit > 10) return sendJson(res, 400, { error: { message: 'limit must be at most 10' } })
      const after = req.url.searchParams.get('after')
      const listed = inOrder ? items : byCreation
      sendJson(res, 200, { items: (after === null ? listed : listed.filter((i) => i.id > after)).slice(0, limit) })
    })
  })
  after(() => up.close())

  const keysetOrderOf = async () => {
    const config = httpResource({ sources: [{ name: 'main', base_url: up.origin }], list: { path: '/items', page_size_param: 'limit', pagination: { style: 'keyset', param: 'after' } } })
    const report = await checkResource({ name: 'items', config, connector: createHttpConnector({ resource: config }), pageSize: 10, pages: 3 })
    return report.guarantees.find((x) => x.name === 'keyset_order')
  }

  test('in the key order: holds', async () => {
    inOrder = true
    const g = await keysetOrderOf()
    assert.equal(g?.status, 'holds', JSON.stringify(g))
  })

  // the walk meets r005 after r007 on its first page and refuses the source itself: fails closed, no longer unsafe
  test('a record listed out of the key order within the first page: fails closed', async () => {
    inOrder = false
    const g = await keysetOrderOf()
    assert.equal(g?.status, 'fails_closed', JSON.stringify(g))
    assert.match(g.detail, /"r005"/)
    assert.ok(g.config_keys.includes('connector.list.pagination.field'), JSON.stringify(g))
  })
})

// Two sources: "main" lists r1…r30 in the order of their ids as strings (r1, r10…r19, r2, r20…), but answers
// `after=rN` with the ids numbered above N, so keyset pages pass over r2…r9; "mirror" lists nothing and answers
// every read by id 503. A record passed over was read again by id alone, across the sources: mirror's failure made
// it "not still there", and keyset_order said holds. It is read again on the source that listed it (stop 40).
describe('keyset_order on a resource of two sources, one failing its reads by id', () => {
  const items = Array.from({ length: 30 }, (_, i) => ({ id: `r${i + 1}`, status: 'active', amount: i, version: 1 })).sort((a, b) => (a.id < b.id ? -1 : 1))
  let main: TestUpstream
  let mirror: TestUpstream
  before(async () => {
    main = await startUpstream((req, res) => {
      if (answerItemById(items, req, res)) return
      const after = req.url.searchParams.get('after')
      const rest = after === null ? items : items.filter((i) => Number(i.id.slice(1)) > Number(after.slice(1)))
      sendJson(res, 200, { items: rest.slice(0, Number(req.url.searchParams.get('limit') ?? 10)) })
    })
    mirror = await startUpstream((req, res) => (req.url.pathname === '/items' ? sendJson(res, 200, { items: [] }) : sendJson(res, 503, { error: 'lookup down' })))
  })
  after(async () => {
    await main.close()
    await mirror.close()
  })

  test("another source failing its read by id does not hide a record the keyset pages passed over", async () => {
    const config = httpResource({
      sources: [
        { name: 'main', base_url: main.origin },
        { name: 'mirror', base_url: mirror.origin },
      ],
      list: { path: '/items', page_size_param: 'limit', pagination: { style: 'keyset', param: 'after' } },
    })
    const report = await checkResource({ name: 'items', config, connector: createHttpConnector({ resource: config }), pageSize: 7, pages: 5 })
    const g = report.guarantees.find((x) => x.name === 'keyset_order')
    assert.equal(g?.status, 'unsafe', JSON.stringify(g))
    assert.match(g.detail, /"r2" of main/)
  })
})

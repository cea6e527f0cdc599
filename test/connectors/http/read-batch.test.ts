import assert from 'node:assert/strict'
import { after, before, beforeEach, describe, it } from 'node:test'
import { canonicalJson } from '../../../src/contract/index.js'
import type { ReadByIdsResult } from '../../../src/connectors/connector.js'
import { createHttpConnector } from '../../../src/connectors/http/index.js'
import { callLog, collection, httpResource } from './fixtures.js'
import { sendJson, startUpstream, type TestUpstream } from './upstream-server.js'

/**
 * `get.batch`: several records read by id in one request. Only what an answer proves is used; everything else
 * is read alone by `get.path`, so a wrong config or an upstream unlike the one configured costs requests, never
 * truth. The upstream here nests its records (`data.records`, each under `user`) and carries undeclared fields,
 * unlike the demo's.
 */

type Mode = 'honest' | 'hides' | 'ignores' | 'summary' | 'twice' | 'mistyped' | 'limited' | 'unavailable' | 'down' | 'mirror' | 'gone' | 'multiple' | 'html' | 'object' | 'etag'

const ITEMS = collection(40).map((item) => ({ ...item, notes: { created_by: `admin-${item.id}`, tags: ['a', item.id] } }))
const byId = new Map<string, Record<string, unknown>>(ITEMS.map((item) => [item.id, item]))

describe('http get.batch', () => {
  let upstream: TestUpstream
  const mode: Record<string, Mode> = { a: 'honest', b: 'honest' }
  before(async () => {
    upstream = await startUpstream((req, res) => {
      const shard = req.url.pathname.split('/')[1]!
      const one = /^\/[ab]\/items\/(.+)$/.exec(req.url.pathname)
      if (one) {
        const id = decodeURIComponent(one[1]!)
        // a source that limits its lookups limits its reads by id too
        if (mode[shard] === 'limited') return sendJson(res, 429, { error: 'slow down' }, { 'retry-after': '3' })
        if (mode[shard] === 'unavailable') return sendJson(res, 503, { error: 'maintenance' }, { 'retry-after': '5' })
        // gone: deleted between the batch read and the read alone
        const record = (shard === 'a' || mode[shard] === 'mirror') && !(mode[shard] === 'gone' && id === 'r001') ? byId.get(id) : undefined
        // etag: the version is only in the ETag header of a read by id; a list carries none
        if (record && mode[shard] === 'etag') return sendJson(res, 200, { user: { ...record, version: undefined } }, { etag: `"e-${id}"` })
        return record ? sendJson(res, 200, { user: record }) : sendJson(res, 404, {})
      }
      if (req.url.pathname !== `/${shard}/lookup`) return sendJson(res, 404, {})
      const asked = (req.url.searchParams.get('ids') ?? '').split(',')
      // shard b holds nothing (an empty list, a 404 by id), unless it mirrors a
      const held = shard === 'a' || mode[shard] === 'mirror' ? asked.flatMap((id) => (byId.has(id) ? [byId.get(id)!] : [])) : []
      const wrap = (records: unknown[]) => sendJson(res, 200, { data: { records: records.map((user) => ({ user })) } })
      switch (mode[shard]) {
        case 'honest':
        case 'mirror':
        case 'gone':
          return wrap([...held].reverse())
        case 'etag':
          return wrap(held.map((r) => ({ ...r, version: undefined })))
        case 'multiple':
          return sendJson(res, 300, { data: { records: held.map((user) => ({ user })) } })
        case 'html':
          res.writeHead(200, { 'content-type': 'text/html' })
          return res.end('<html>lookup</html>')
        case 'object':
          return sendJson(res, 200, { data: { records: { user: held[0] } } })
        case 'hides':
          return wrap(held.filter((r) => r.id !== 'r002'))
        case 'ignores':
          return wrap(ITEMS.slice(0, 10))
        case 'summary':
          return wrap(held.map(({ notes: _notes, ...rest }) => rest))
        case 'twice':
          // r001 twice; r002 first mistyped (not whole), then whole with another amount
          // and an item with no id at all, which answers for nobody
          return wrap([...held, ...held.filter((r) => r.id === 'r001').map((r) => ({ ...r, amount: 999 })), { ...byId.get('r002')!, amount: 'two' }, { ...byId.get('r002')!, amount: 222 }, { status: 'active' }])
        case 'mistyped':
          // r003's amount is not a number; r004 has no status
          return wrap(held.map((r) => (r.id === 'r003' ? { ...r, amount: 'thirty' } : r.id === 'r004' ? { ...r, status: undefined } : r)))
        case 'limited':
          return sendJson(res, 429, { error: 'slow down' }, { 'retry-after': '3' })
        case 'unavailable':
          return sendJson(res, 503, { error: 'maintenance' }, { 'retry-after': '5' })
        case 'down':
          return sendJson(res, 500, { error: 'down' })
      }
    })
  })
  after(() => upstream.close())
  beforeEach(() => {
    mode.a = 'honest'
    mode.b = 'honest'
    upstream.seen.length = 0
  })

  function connector(batch: Record<string, unknown> | null = {}, sources = ['a']) {
    const log = callLog()
    const conn = createHttpConnector({
      resource: httpResource({
        sources: sources.map((name) => ({ name, base_url: `${upstream.origin}/${name}` })),
        get: {
          path: '/items/{id}',
          record_path: 'user',
          ...(batch === null ? {} : { batch: { path: '/lookup', ids_param: 'ids', max_ids: 12, items_path: 'data.records', record_path: 'user', ...batch } }),
        },
      }),
      onCall: log.onCall,
    })
    return { conn, calls: log.calls }
  }
  const asked = (ids: readonly string[]) => upstream.seen.filter((r) => r.url.pathname.endsWith('/lookup')).map((r) => r.url.searchParams.get('ids')!.split(',').length)
  const alone = () => upstream.seen.filter((r) => r.url.pathname.includes('/items/')).map((r) => decodeURIComponent(r.url.pathname.split('/').pop()!))
  const ids = (n: number) => ITEMS.slice(0, n).map((i) => i.id)
  /** The result as comparable data: each record with its whole representation. */
  const plain = (result: ReadByIdsResult) => ({
    records: [...result.records.values()].sort((x, y) => x.id.localeCompare(y.id)).map((r) => ({ ...r, representation: canonicalJson(r.representation) })),
    missing: [...result.missing].sort(),
    failed: result.failed.map((f) => [f.id, f.status]).sort(),
  })

  it('reads max_ids per request and answers exactly what reading each alone answers, representation included', async () => {
    const wanted = [...ids(30), 'nope']
    const reference = await connector(null).conn.readByIds(wanted)
    upstream.seen.length = 0
    const { conn, calls } = connector()
    const result = await conn.readByIds(wanted)
    assert.deepEqual(plain(result), plain(reference))
    assert.deepEqual(result.missing, ['nope'])
    assert.deepEqual(asked(wanted), [12, 12, 7])
    // alone: one record of each answer (the check that answers are whole), and the id no answer carried
    assert.deepEqual(alone().sort(), ['nope', 'r001', 'r013', 'r025'])
    const batchCalls = calls.filter((c) => c.endpoint === '/lookup')
    assert.deepEqual(batchCalls.map((c) => [c.ids, c.outcome, c.status, c.targetId]), [
      [12, 'found', 200, undefined],
      [12, 'found', 200, undefined],
      [7, 'partial', 200, undefined],
    ])
  })

  it('one id is read alone; so is an id holding a comma under the comma encoding, but not under plain', async () => {
    await connector().conn.readByIds(['r001'])
    assert.deepEqual(asked([]), [])
    assert.deepEqual(alone(), ['r001'])
    upstream.seen.length = 0
    const result = await connector().conn.readByIds(['r001', 'r002', 'x,y'])
    assert.deepEqual(result.missing, ['x,y'])
    assert.deepEqual(upstream.seen.filter((r) => r.url.pathname.endsWith('/lookup')).map((r) => r.url.searchParams.getAll('ids')), [['r001,r002']])
    upstream.seen.length = 0
    await connector({ encoding: 'plain' }).conn.readByIds(['r001', 'x,y'])
    assert.deepEqual(upstream.seen.filter((r) => r.url.pathname.endsWith('/lookup')).map((r) => r.url.searchParams.getAll('ids')), [['r001', 'x,y']])
  })

  it('an id the answer leaves out is read alone: absence is only said by get.path', async () => {
    mode.a = 'hides'
    const result = await connector().conn.readByIds(ids(5))
    assert.equal(result.records.size, 5)
    assert.deepEqual(result.missing, [])
    assert.deepEqual(alone().sort(), ['r001', 'r002'])
  })

  const readAloneCases: [Mode, string][] = [
    ['ignores', 'foreign_id'],
    ['summary', 'not_whole'],
    ['down', 'failed'],
    ['multiple', 'failed'],
    ['html', 'unexpected'],
    ['object', 'unexpected'],
  ]
  for (const [which, outcome] of readAloneCases)
    it(`an answer that is not a whole by-ids answer (${which}) is not used: every id is read alone (${outcome})`, async () => {
      mode.a = which
      const wanted = ids(20).slice(5)
      const reference = await connector(null).conn.readByIds(wanted)
      upstream.seen.length = 0
      const { conn, calls } = connector()
      const result = await conn.readByIds(wanted)
      assert.deepEqual(plain(result), plain(reference))
      assert.ok(canonicalJson(result.records.get('r006')!.representation).includes('admin-r006'), 'the whole record, not the summary')
      assert.deepEqual(calls.filter((c) => c.endpoint === '/lookup').map((c) => c.outcome), [outcome, outcome])
      // a summary is found out by the read alone of one record of each answer (r006, r018); then every id is read alone
      const expectAlone = which === 'summary' ? [...wanted, 'r006', 'r018'] : wanted
      assert.deepEqual(alone().sort(), expectAlone.sort())
    })

  it('a record the answer carries but reading it alone no longer finds: the answer is not used, and the record is missing', async () => {
    mode.a = 'gone'
    const { conn, calls } = connector()
    const result = await conn.readByIds(ids(4))
    assert.deepEqual(result.missing, ['r001'])
    assert.deepEqual([...result.records.keys()].sort(), ['r002', 'r003', 'r004'])
    assert.deepEqual(calls.filter((c) => c.endpoint === '/lookup').map((c) => c.outcome), ['not_whole'])
  })

  it('a record without a version (a list carries no ETag) is read alone, where the version is', async () => {
    mode.a = 'etag'
    const log = callLog()
    const conn = createHttpConnector({
      resource: httpResource(
        { sources: [{ name: 'a', base_url: `${upstream.origin}/a` }], version: { from: 'etag' }, get: { path: '/items/{id}', record_path: 'user', batch: { path: '/lookup', ids_param: 'ids', items_path: 'data.records', record_path: 'user' } } },
        { fields: { id: 'string', status: 'string', amount: 'number' } },
      ),
      onCall: log.onCall,
    })
    const result = await conn.readByIds(ids(3))
    assert.deepEqual([...result.records.values()].map((r) => [r.id, r.version]).sort(), ids(3).map((id) => [id, `"e-${id}"`]))
    assert.deepEqual(alone().sort(), ids(3))
  })

  it('a source that cannot be reached answers no batch: its ids are read alone, and fail', async () => {
    const log = callLog()
    const conn = createHttpConnector({
      resource: httpResource({ sources: [{ name: 'closed', base_url: 'http://127.0.0.1:1' }], get: { path: '/items/{id}', batch: { path: '/lookup', ids_param: 'ids' } } }),
      onCall: log.onCall,
    })
    const result = await conn.readByIds(['r001', 'r002'])
    assert.deepEqual(result.failed.map((f) => f.id).sort(), ['r001', 'r002'])
    assert.deepEqual(log.calls.map((c) => [c.endpoint, c.outcome]), [['/lookup', 'failed'], ['/items/{id}', 'failed'], ['/items/{id}', 'failed']])
  })

  it('a record the answer names twice, or whose declared field is mistyped, is read alone', async () => {
    for (const [which, read] of [['twice', ['r001', 'r002']], ['mistyped', ['r003', 'r004']]] as const) {
      mode.a = which
      upstream.seen.length = 0
      const result = await connector().conn.readByIds(ids(6))
      for (const id of read) assert.equal(result.records.get(id)!.fields.amount, byId.get(id)!.amount, `${which}: ${id}`)
      // the sample read of the answer (its first whole record), then each of those
      assert.deepEqual(alone().slice(1).sort(), [...read], which)
    }
  })

  it('a 429 answers each id of the request rate limited, without reading them alone; a later source that has them does not make them found', async () => {
    mode.a = 'limited'
    const { conn, calls } = connector()
    const result = await conn.readByIds(ids(4))
    assert.deepEqual(calls.map((c) => [c.endpoint, c.status, c.outcome]), [['/lookup', 429, 'rate_limited']])
    assert.deepEqual(result.records.size, 0)
    assert.deepEqual(result.failed.map((f) => [f.id, f.status]), ids(4).map((id) => [id, 429]))
    assert.match(result.failed[0]!.message, /source "a"/)
    assert.deepEqual(alone(), [])

    // b is asked first only for what a left: here a limited everything, b answers none, so they stay limited
    upstream.seen.length = 0
    const two = await connector({}, ['a', 'b']).conn.readByIds(ids(3))
    assert.deepEqual(two.failed.map((f) => f.status), [429, 429, 429])
    assert.deepEqual(upstream.seen.map((r) => r.url.pathname), ['/a/lookup', '/b/lookup'])

    // a later source that has them answers, but a still says wait: whether a holds them too is unknown, so they
    // stay rate limited with a's wait (read again later), never found on b
    mode.b = 'mirror'
    const mirrored = await connector({}, ['a', 'b']).conn.readByIds(ids(3))
    assert.equal(mirrored.records.size, 0)
    assert.deepEqual(mirrored.failed.map((f) => [f.status, f.retryAfterSeconds]), [[429, 3], [429, 3], [429, 3]])
    assert.match(mirrored.failed[0]!.message, /found on source "b", but source "a" could not be read/)
  })

  it('a 503 with a usable Retry-After is taken as a 429: each id fails 503 with the wait, none is read alone (or reported missing); a later source that has them does not make them found', async () => {
    mode.a = 'unavailable'
    const { conn, calls } = connector()
    const result = await conn.readByIds(ids(4))
    assert.deepEqual(calls.map((c) => [c.endpoint, c.status, c.outcome]), [['/lookup', 503, 'rate_limited']], 'the source said "come back in 5 s": not asked again once per id')
    assert.deepEqual(result.missing, [])
    assert.deepEqual(result.failed.map((f) => [f.id, f.status, f.retryAfterSeconds]), ids(4).map((id) => [id, 503, 5]))
    assert.match(result.failed[0]!.message, /source "a" answered 503.*retry after 5 s/)
    assert.deepEqual(alone(), [])

    // b has nothing by batch: the ids stay failed with a's answer, never missing
    const two = await connector({}, ['a', 'b']).conn.readByIds(ids(3))
    assert.deepEqual([two.missing, two.failed.map((f) => f.status)], [[], [503, 503, 503]])
    // b has them, a says come back in 5 s: failed with a's wait, never found on b (a may hold them too)
    mode.b = 'mirror'
    const mirrored = await connector({}, ['a', 'b']).conn.readByIds(ids(3))
    assert.equal(mirrored.records.size, 0)
    assert.deepEqual(mirrored.failed.map((f) => [f.status, f.retryAfterSeconds]), [[503, 5], [503, 5], [503, 5]])
  })

  it('sources are asked in order, each for what the earlier ones did not answer; an id one answered is asked of the others alone', async () => {
    mode.a = 'hides'
    const { conn, calls } = connector({}, ['a', 'b'])
    const result = await conn.readByIds(ids(4))
    assert.equal(result.records.size, 4)
    // r002: not in a's answer, not in b's; read alone, a has it (and b not: an id two sources hold names neither)
    assert.deepEqual(
      calls.map((c) => [c.source, c.endpoint, c.outcome]),
      [
        ['a', '/items/{id}', 'found'], // the sample of a's answer
        ['a', '/lookup', 'partial'],
        ['b', '/lookup', 'partial'],
        ['b', '/items/{id}', 'not_found'], // r001, r003, r004: a's answer carried them; b must not hold them too
        ['b', '/items/{id}', 'not_found'],
        ['b', '/items/{id}', 'not_found'],
        ['a', '/items/{id}', 'found'],
        ['b', '/items/{id}', 'not_found'],
      ],
    )
  })

  it('a batch path with a placeholder, or max_ids under 2, is refused at configuration', () => {
    assert.throws(() => connector({ path: '/lookup/{id}' }), /connector\.get\.batch\.path: .*cannot have placeholders/)
    assert.throws(() => connector({ path: '/../admin' }), /get\.batch\.path/)
    assert.throws(() => connector({ max_ids: 1 }), /max_ids|too small|>=2/i)
  })
})

import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { ServerResponse } from 'node:http'
import { SYSTEM_ACTOR, digestOf, type Actor } from '../../src/contract/index.js'
import type { Catalogue } from '../../src/resources/index.js'
import { csvCell, type SelectionService } from '../../src/selections/index.js'
import { sendJson, startUpstream, type SeenRequest, type TestUpstream } from '../connectors/http/upstream-server.js'
import { STORE_KINDS, createTestStore, type TestStore } from '../support/stores.js'
import { selectionServiceOn } from './fixtures/selection-config.js'

interface Item {
  id: string
  status: string
  amount: number
  version: number
}

const item = (id: string, status = 'past_due'): Item => ({ id, status, amount: 10, version: 1 })

/** A list endpoint that pages `items` in the order given, two per page, with an opaque offset cursor. */
function lister(items: () => readonly Item[], overlap = false) {
  return (req: SeenRequest, res: ServerResponse) => {
    if (req.url.pathname !== '/items') return sendJson(res, 404, { error: 'no' })
    const start = Number(req.url.searchParams.get('cursor') ?? 0)
    const page = items().slice(start, start + 2)
    const end = start + page.length
    // with overlap, each page after the first starts one record early: the upstream's order moved
    const next = end < items().length ? String(overlap ? end - 1 + (start === 0 ? 0 : 1) : end) : null
    sendJson(res, 200, { items: page, next_cursor: next })
  }
}

const AGENT: Actor = { principal: 'prn_test_agent', name: 'agent', role: 'agent', scopes: { resources: '*', actions: '*' }, surface: 'http' }

for (const kind of STORE_KINDS) {
  describe(`a selection over an HTTP upstream without snapshot, two sources (${kind} store)`, () => {
    let eu: TestUpstream
    let us: TestUpstream
    let euItems: Item[]
    let usItems: Item[]
    let overlapping: TestUpstream
    let ts: TestStore
    let catalogue: Catalogue
    let selections: SelectionService

    before(async () => {
      // each source answers in DESCENDING id order, and the two interleave: the walk order is not the frozen order
      euItems = ['r009', 'r007', 'r005', 'r003', 'r001'].map((id) => item(id, id === 'r007' || id === 'r001' ? 'disputed' : 'past_due'))
      usItems = ['r010', 'r008', 'r006', 'r004', 'r002'].map((id) => item(id, id === 'r004' ? 'disputed' : 'past_due'))
      eu = await startUpstream(lister(() => euItems))
      us = await startUpstream(lister(() => usItems))
      overlapping = await startUpstream(lister(() => ['a1', 'a2', 'a3', 'a4', 'a5'].map((id) => item(id)), true))
      ts = await createTestStore(kind)
      const resource = (sources: { name: string; base_url: string }[]) => ({
        environment: { name: 'items-test' },
        connector: {
          kind: 'http',
          sources,
          timeout_ms: 2000,
          list: { path: '/items', pagination: { style: 'cursor' } },
          get: { path: '/items/{id}' },
          version: { from: 'field', field: 'version' },
        },
        fields: { id: 'string', status: 'string', amount: 'number', version: 'integer' },
        review_fields: ['id', 'status', 'amount'],
        group_by: ['status'],
      })
      ;({ catalogue, selections } = selectionServiceOn(ts, {
        items: resource([
          { name: 'eu', base_url: eu.origin },
          { name: 'us', base_url: us.origin },
        ]),
        overlapping: resource([{ name: 'main', base_url: overlapping.origin }]),
      }))
    })
    after(async () => {
      await catalogue?.close()
      await ts?.drop()
      await Promise.all([eu?.close(), us?.close(), overlapping?.close()])
    })

    test('members are frozen in id order with their versions and sources; consistent_snapshot is false; the digest covers the sorted list', async () => {
      const view = await selections.create(AGENT, 'items', { filter: {}, exclude: [{ rule: 'disputed', filter: { status: 'disputed' } }] })
      assert.equal(view.complete, true, JSON.stringify(view.incomplete_reasons))
      assert.equal(view.consistent_snapshot, false)
      assert.equal(view.scope.consistent_snapshot, false)
      const expected = ['r002', 'r003', 'r005', 'r006', 'r008', 'r009', 'r010']
      assert.equal(view.count, expected.length)
      assert.deepEqual(view.records.map((r) => [r.ord, r.id, r.version]), expected.map((id, i) => [i + 1, id, '1']))
      assert.equal(view.digest, digestOf(expected.map((id) => ({ id, version: '1' }))))
      assert.deepEqual(view.exclusions.map((e) => [e.rule, e.count]), [['disputed', 3]])
      const excluded = await selections.excluded(AGENT, view.selection_id, { rule: 'disputed' })
      assert.deepEqual(excluded.records.map((r) => [r.ord, r.id]), [[1, 'r001'], [2, 'r004'], [3, 'r007']])
      const members = await selections.members(view.selection_id, 0, 100)
      assert.deepEqual(Object.fromEntries(members.map((m) => [m.id, m.source])), { r002: 'us', r003: 'eu', r005: 'eu', r006: 'us', r008: 'us', r009: 'eu', r010: 'us' })
      // pages after the renumbering are a seek on ord
      const second = await selections.page(AGENT, view.selection_id, { limit: 3 })
      const rest = await selections.page(AGENT, view.selection_id, { limit: 10, cursor: second.next_cursor! })
      assert.deepEqual([...second.records, ...rest.records].map((r) => r.id), expected)
      assert.equal(rest.next_cursor, null)
    })

    test('the same id from two sources is refused (409): a write by id could not tell them apart; nothing is left behind', async () => {
      const before = await ts.store.db.selectFrom('selections').select(({ fn }) => fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
      usItems = [...usItems, item('r003')]
      try {
        await assert.rejects(selections.create(AGENT, 'items', {}), (error: any) => error.code === 'conflict' && /r003/.test(error.message))
      } finally {
        usItems = usItems.filter((i) => !(i.id === 'r003'))
      }
      const after = await ts.store.db.selectFrom('selections').select(({ fn }) => fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
      assert.equal(Number(after.n), Number(before.n))
      const orphans = await ts.store.db.selectFrom('selection_members').leftJoin('selections', 'selections.id', 'selection_members.selection_id').select('selection_members.record_id').where('selections.id', 'is', null).execute()
      assert.deepEqual(orphans, [])
    })

    test('a record returned twice by a source without snapshot is frozen once, and the selection says the data moved', async () => {
      const view = await selections.create(AGENT, 'overlapping', {})
      assert.deepEqual((await selections.members(view.selection_id, 0, 100)).map((m) => m.id), ['a1', 'a2', 'a3', 'a4', 'a5'])
      assert.equal(view.complete, false)
      assert.deepEqual(view.incomplete_reasons.map((r) => r.code), ['SNAPSHOT_INVALIDATED'])
      assert.ok(view.warnings.some((w) => w.code === 'ORDER_FALLBACK'))
      const record = await selections.load(AGENT, view.selection_id)
      assert.throws(() => selections.assertUsable(record), (e: any) => e.code === 'selection_incomplete')
    })

    test('an agent cannot read a selection of a resource outside its scope; the system can', async () => {
      const view = await selections.create(AGENT, 'items', {})
      const outsider: Actor = { ...AGENT, principal: 'prn_other', scopes: { resources: ['overlapping'], actions: '*' } }
      await assert.rejects(selections.load(outsider, view.selection_id), (e: any) => e.code === 'forbidden')
      assert.equal((await selections.load(SYSTEM_ACTOR, view.selection_id)).count, 10)
    })
  })
}

describe('CSV cells', () => {
  test('quotes, doubles quotes, JSON for lists, and defuses spreadsheet formulas', () => {
    assert.equal(csvCell('plain'), 'plain')
    assert.equal(csvCell('a,b'), '"a,b"')
    assert.equal(csvCell('say "hi"'), '"say ""hi"""')
    assert.equal(csvCell('two\nlines'), '"two\nlines"')
    assert.equal(csvCell(['x', 'y']), '"[""x"",""y""]"')
    assert.equal(csvCell(null), '')
    assert.equal(csvCell(12.5), '12.5')
    assert.equal(csvCell('=HYPERLINK("http://evil")'), `"'=HYPERLINK(""http://evil"")"`)
    // a negative number's digits run nothing; a formula behind a minus does
    assert.equal(csvCell('-3'), '-3')
    assert.equal(csvCell('-3+cmd'), "'-3+cmd")
  })
})

import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { sql } from 'kysely'
import { SYSTEM_ACTOR, createListDigest } from '../../src/contract/index.js'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { STORE_KINDS } from '../support/stores.js'

const COUNT = 20_000

for (const kind of STORE_KINDS) {
  describe(`a large selection pages by keyset on ord (${kind} store, ${COUNT} records)`, () => {
    let fx: GatewayFixture
    let view: Awaited<ReturnType<GatewayFixture['gateway']['selections']['create']>>
    before(async () => {
      fx = await startDemoGateway({ store: kind, count: COUNT, serve: false })
      view = await fx.gateway.selections.create(SYSTEM_ACTOR, 'subscriptions', { filter: {}, page_size: 2000 })
    })
    after(async () => {
      await fx?.close()
    })

    test('every member, once, in order; the digest recomputed from the pages equals the selection digest', async () => {
      assert.equal(view.count, COUNT)
      assert.equal(view.complete, true)
      const digest = createListDigest()
      let cursor: string | undefined
      let seen = 0
      let last = ''
      for (;;) {
        const page = await fx.gateway.selections.page(SYSTEM_ACTOR, view.selection_id, { limit: 1000, ...(cursor ? { cursor } : {}) })
        for (const r of page.records) {
          assert.ok(r.id > last)
          last = r.id
          seen += 1
          assert.equal(r.ord, seen)
          digest.add({ id: r.id, version: r.version })
        }
        if (!page.next_cursor) break
        cursor = page.next_cursor
      }
      assert.equal(seen, COUNT)
      assert.equal(digest.finish(), view.digest)
    })

    test('a page deep in the selection is an index seek on (selection_id, ord), like the first page', async () => {
      const { db } = fx.gateway.store
      const deep = COUNT - 100
      if (kind === 'sqlite') {
        const plan = await sql<{ detail: string }>`explain query plan select ord, record_id, version, fields from selection_members where selection_id = ${view.selection_id} and ord > ${deep} order by ord limit 100`.execute(db)
        const detail = plan.rows.map((r) => r.detail).join(' | ')
        assert.match(detail, /SEARCH selection_members USING (INDEX|PRIMARY KEY).*\(selection_id=\? AND ord>\?\)/, detail)
        assert.doesNotMatch(detail, /TEMP B-TREE/, 'no sort: the index gives the order')
      } else {
        await sql`analyze selection_members`.execute(db)
        const plan = await sql<{ 'QUERY PLAN': string }>`explain select ord, record_id, version, fields from selection_members where selection_id = ${view.selection_id} and ord > ${deep} order by ord limit 100`.execute(db)
        const text = plan.rows.map((r) => r['QUERY PLAN']).join('\n')
        assert.match(text, /Index Scan using selection_members_pk/, text)
        assert.doesNotMatch(text, /Sort/, text)
      }
      const page = await fx.gateway.selections.members(view.selection_id, deep, 100)
      assert.deepEqual(page.map((m) => m.ord), Array.from({ length: 100 }, (_, i) => deep + i + 1))
    })
  })
}

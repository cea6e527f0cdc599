import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startThingsGateway, type Thing } from '../plans/support/odd-upstream.js'
import { csvRecords, csvRows } from '../support/csv-rows.js'
import type { GatewayFixture } from '../support/gateway-fixture.js'
import { STORE_KINDS } from '../support/stores.js'

/**
 * An expired selection's export must not read like a usable one: the CSV carries the selection's state and expiry on
 * every row (`selection_state` beside `selection_complete`, first; `selection_expires_at` with the other facts, last),
 * as the NDJSON's first line carries them. Before, a CSV of an expired selection was the same file as a fresh one's.
 * On the odd HTTP upstream: ids with commas, quotes, a line break and non-ASCII text, read back exactly.
 */
const ODD: Thing[] = [
  { id: 'c,1', name: 'comma', status: 'open', note: 'n' },
  { id: 'q"2"', name: 'quotes', status: 'open', note: 'n' },
  { id: 'l\n3', name: 'line break', status: 'open', note: 'n' },
  { id: 'ü東京,"4"\r\n', name: 'all of them', status: 'open', note: 'n' },
]

for (const kind of STORE_KINDS) {
  describe(`an export says the selection's state and expiry (${kind} store, an odd HTTP upstream)`, () => {
    let things: Awaited<ReturnType<typeof startThingsGateway>>
    let fx: GatewayFixture
    let token: string
    before(async () => {
      things = await startThingsGateway(ODD, kind)
      ;({ fx, token } = things)
    })
    after(async () => {
      await things?.close()
    })
    const auth = () => ({ authorization: `Bearer ${token}` })
    const exported = async (id: string, format: string) => {
      const res = await fetch(`${fx.base}/v1/selections/${id}/export?format=${format}`, { headers: auth() })
      assert.equal(res.status, 200)
      return res.text()
    }

    test('fresh, then expired: every CSV row and the NDJSON first line say which, and until when', async () => {
      const res = await fetch(`${fx.base}/v1/resources/things/selections`, { method: 'POST', headers: { ...auth(), 'content-type': 'application/json' }, body: JSON.stringify({ filter: { id: { in: ODD.map((t) => t.id) } } }) })
      const sel = (await res.json()) as any
      assert.equal(sel.count, ODD.length)

      const fresh = await exported(sel.selection_id, 'csv')
      assert.deepEqual(csvRows(fresh)[0]!.slice(0, 3).map((c) => c.text), ['selection_complete', 'selection_state', 'id'])
      assert.deepEqual(csvRows(fresh)[0]!.slice(-3).map((c) => c.text), ['selection_expires_at', 'selection_count', 'selection_digest'])
      const rows = csvRecords(fresh)
      assert.deepEqual(rows.map((r) => r.id).sort(), ODD.map((t) => t.id).sort(), 'each odd id read back exactly')
      for (const row of rows) assert.deepEqual([row.selection_complete, row.selection_state, row.selection_expires_at], ['true', 'frozen', sel.expires_at])

      // expired (its expiry moved into the past in the store: judged at the store's now on either kind)
      await fx.gateway.store.db.updateTable('selections').set({ expires_at: '2001-01-01T00:00:00.000Z' }).where('id', '=', sel.selection_id).execute()
      const stale = csvRecords(await exported(sel.selection_id, 'csv'))
      assert.equal(stale.length, ODD.length)
      for (const row of stale) assert.deepEqual([row.selection_state, row.selection_expires_at], ['expired', '2001-01-01T00:00:00.000Z'])
      const head = JSON.parse((await exported(sel.selection_id, 'ndjson')).split('\n')[0]!)
      assert.deepEqual([head.state, head.expires_at], ['expired', '2001-01-01T00:00:00.000Z'])
    })
  })
}

import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import BetterSqlite3 from 'better-sqlite3'
import { startThingsGateway } from '../plans/support/odd-upstream.js'
import type { GatewayFixture } from '../support/gateway-fixture.js'
import { readAll } from '../support/read-body.js'

/**
 * An export whose members, as read from the store, are not the frozen set (a row lost or altered under the
 * gateway): the stream fails, so the client's body is cut, and an NDJSON file lacks its end line. Before, the file
 * ended cleanly with what the store still held, and looked whole.
 */
describe('an export that cannot send the frozen set never ends looking whole (an odd http upstream, SQLite store)', () => {
  let things: Awaited<ReturnType<typeof startThingsGateway>>
  let fx: GatewayFixture
  let token: string
  let store: BetterSqlite3.Database
  before(async () => {
    things = await startThingsGateway()
    ;({ fx, token } = things)
    store = new BetterSqlite3(fx.storeUrl.slice('sqlite:'.length))
  })
  after(async () => {
    store?.close()
    await things?.close()
  })
  const select = async () => {
    const res = await fetch(`${fx.base}/v1/resources/things/selections`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{}' })
    return ((await res.json()) as any).selection_id as string
  }
  const exportOf = (id: string, format: string) => fetch(`${fx.base}/v1/selections/${id}/export?format=${format}`, { headers: { authorization: `Bearer ${token}` } })

  for (const [name, spoil] of [
    ['a member row lost', (id: string) => store.prepare('delete from selection_members where selection_id = ? and ord = 3').run(id)],
    ['a member version altered', (id: string) => store.prepare("update selection_members set version = 'W/\"forged\"' where selection_id = ? and ord = 3").run(id)],
  ] as const)
    test(`${name}: NDJSON and CSV are cut, the NDJSON has no end line`, async () => {
      const id = await select()
      const whole = await readAll(await exportOf(id, 'ndjson'))
      assert.equal(whole.ended, 'clean')
      assert.equal(JSON.parse(whole.text.trim().split('\n').at(-1)!).end, true)
      spoil(id)
      for (const format of ['ndjson', 'csv']) {
        const res = await exportOf(id, format)
        assert.equal(res.status, 200)
        const got = await readAll(res)
        assert.equal(got.ended, 'cut', `${format}: ${got.text}`)
        if (format === 'ndjson') assert.ok(!got.text.split('\n').some((l) => l.includes('"end":true')), got.text)
      }
    })

  test('a value holding half a surrogate pair, which UTF-8 cannot carry: the CSV is cut before its row, never written with U+FFFD (two such values read the same); the NDJSON escapes it', async () => {
    things.up.things.set('half-1', { id: 'half-1', name: 'n\ud800', status: 'open', note: 'x' })
    things.up.things.set('half-2', { id: 'half-2', name: 'n\udc00', status: 'open', note: 'x' })
    try {
      const res = await fetch(`${fx.base}/v1/resources/things/selections`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ filter: { id: { in: ['half-1', 'half-2'] } } }) })
      const id = ((await res.json()) as any).selection_id
      const nd = await readAll(await exportOf(id, 'ndjson'))
      assert.equal(nd.ended, 'clean')
      assert.ok(nd.text.includes('"n\\ud800"') && nd.text.includes('"n\\udc00"'), nd.text)
      const csv = await readAll(await exportOf(id, 'csv'))
      assert.equal(csv.ended, 'cut', csv.text)
      assert.ok(!csv.text.includes('\ufffd'), csv.text)
      // its audit row says why it stopped, and that no member row was sent (the page holding the value was not)
      const rows = await fx.gateway.store.db.selectFrom('audit_events').select(['summary']).where('selection_id', '=', id).where('action', '=', 'GET /v1/selections/:id/export').orderBy('seq').execute()
      const manifest = JSON.parse(rows.at(-1)!.summary).manifest
      assert.deepEqual([manifest.format, manifest.stopped, manifest.error, manifest.end_reached, manifest.rows_sent], ['csv', 'value_unwritable', 'conflict', false, 0])
    } finally {
      things.up.things.delete('half-1')
      things.up.things.delete('half-2')
    }
  })
})

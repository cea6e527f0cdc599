import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import type { ServerResponse } from 'node:http'
import BetterSqlite3 from 'better-sqlite3'
import { digestOf, type Actor } from '../../src/contract/index.js'
import type { Catalogue } from '../../src/resources/index.js'
import type { SelectionService } from '../../src/selections/index.js'
import { sendJson, startUpstream, type SeenRequest, type TestUpstream } from '../connectors/http/upstream-server.js'
import { STORE_KINDS, createTempDir, createTestStore, type TempDir, type TestStore } from '../support/stores.js'
import { httpItemsResource, selectionServiceOn, sqlItemsResource } from './fixtures/selection-config.js'

/**
 * An upstream id (or version) holding a lone UTF-16 surrogate or a NUL is text no store keeps exactly: SQLite
 * read `b\ud800` back as `b\ufffd\ufffd\ufffd` (so the frozen member was not the upstream's id, the digest did not
 * match the stored members, and `b\ud800` and `b\udbff` became one id), PostgreSQL refused it with a raw error
 * (500 internal, for every selection over that upstream). Such a record cannot be judged: it is counted as a
 * SHAPE_MISMATCH on the id (or version) field, the selection is not complete, and every member frozen is the id
 * the upstream gave.
 */
const AGENT: Actor = { principal: 'prn_test_agent', name: 'agent', role: 'agent', scopes: { resources: '*', actions: '*' }, surface: 'http' }
let items: { id: string; status: string; version: string }[] = []

function lister(req: SeenRequest, res: ServerResponse) {
  if (req.url.pathname !== '/items') return sendJson(res, 404, { error: 'no' })
  sendJson(res, 200, { items, next_cursor: null })
}

for (const kind of STORE_KINDS) {
  describe(`ids and versions no store keeps exactly (${kind} store)`, () => {
    let up: TestUpstream
    let ts: TestStore
    let dir: TempDir
    let table: BetterSqlite3.Database
    let catalogue: Catalogue
    let selections: SelectionService
    before(async () => {
      up = await startUpstream(lister)
      ts = await createTestStore(kind)
      dir = await createTempDir('warrant-odd-ids-')
      const file = join(dir.path, 'items.db')
      table = new BetterSqlite3(file)
      table.exec('create table items (id text primary key, status text, version text not null)')
      ;({ catalogue, selections } = selectionServiceOn(ts, { items: httpItemsResource(up.origin, 'string'), rows: sqlItemsResource(file) }))
    })
    after(async () => {
      await catalogue?.close()
      table?.close()
      await dir?.drop()
      await ts?.drop()
      await up?.close()
    })

    /** Creates the selection: not complete, a SHAPE_MISMATCH naming `fields`, members exactly `ids`, digest theirs. */
    async function expectUnjudged(resource: string, fields: string[], count: number, ids: string[]) {
      const view = await selections.create(AGENT, resource, {})
      assert.equal(view.complete, false)
      const shape = view.incomplete_reasons.find((r) => r.code === 'SHAPE_MISMATCH')
      assert.ok(shape, JSON.stringify(view.incomplete_reasons))
      assert.deepEqual([shape.fields, shape.record_count], [fields, count])
      const stored = await selections.members(view.selection_id, 0, 100)
      assert.deepEqual(
        stored.map((m) => m.id),
        ids,
      )
      assert.equal(view.digest, digestOf(stored.map((m) => ({ id: m.id, version: m.version }))), 'the digest is the digest of the stored members')
    }

    test('http: an id holding a lone surrogate is unjudged; the other members are frozen as given', async () => {
      items = [
        { id: 'a', status: 's', version: '1' },
        { id: 'b\ud800', status: 's', version: '1' },
        { id: 'c', status: 's', version: '1' },
      ]
      await expectUnjudged('items', ['id'], 1, ['a', 'c'])
    })

    test('http: two ids differing only in their lone surrogate never become one member', async () => {
      items = [
        { id: 'b\ud800', status: 's', version: '1' },
        { id: 'b\udbff', status: 's', version: '1' },
        { id: 'c\udc00d', status: 's', version: '1' },
      ]
      await expectUnjudged('items', ['id'], 3, [])
    })

    test('http: an id or a version holding a NUL is unjudged, never a raw store error', async () => {
      items = [
        { id: 'a\u0000b', status: 's', version: '1' },
        { id: 'c', status: 's', version: '1\u0000' },
        { id: 'd', status: 'past\u0000due', version: '1' },
      ]
      // a NUL in any other field is kept as read
      await expectUnjudged('items', ['id', 'version'], 2, ['d'])
    })

    test('sql (SQLite upstream): an id or a version holding a NUL is unjudged, never a raw store error', async () => {
      table.exec('delete from items')
      const insert = table.prepare('insert into items values (?, ?, ?)')
      for (const row of [
        ['a', 's', '1'],
        ['a\u0000b', 's', '1'],
        ['c', 's', '2\u0000'],
        ['d', 'past\u0000due', '1'],
      ])
        insert.run(...row)
      await expectUnjudged('rows', ['id', 'version'], 2, ['a', 'd'])
    })
  })
}

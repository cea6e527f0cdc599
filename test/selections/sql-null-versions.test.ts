import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import BetterSqlite3 from 'better-sqlite3'
import type { Actor } from '../../src/contract/index.js'
import type { Catalogue } from '../../src/resources/index.js'
import type { SelectionService } from '../../src/selections/index.js'
import { STORE_KINDS, createTempDir, createTestStore, type TempDir, type TestStore } from '../support/stores.js'
import { selectionServiceOn, sqlItemsResource } from './fixtures/selection-config.js'

/**
 * A sql table whose version column is NULL for some rows, '' for another: the selection froze them at versions
 * "null" and "", said complete and committable, and the conditional UPDATE (`version = ?`) could never match
 * them. Rows without a version are not frozen: the selection says not complete, naming the version column and
 * the fix; the text 'null' is a version like any other.
 */
const AGENT: Actor = { principal: 'prn_test_agent', name: 'agent', role: 'agent', scopes: { resources: '*', actions: '*' }, surface: 'http' }

for (const kind of STORE_KINDS) {
  describe(`a sql selection over rows without a version (${kind} store)`, () => {
    let ts: TestStore
    let dir: TempDir
    let catalogue: Catalogue
    let selections: SelectionService
    before(async () => {
      ts = await createTestStore(kind)
      dir = await createTempDir('warrant-null-versions-')
      const file = join(dir.path, 'items.db')
      const table = new BetterSqlite3(file)
      table.exec('create table items (id text primary key, status text, version text)')
      table.exec("insert into items values ('a', 's', 'v1'), ('b', 's', null), ('c', 's', ''), ('d', 's', 'null')")
      table.close()
      ;({ catalogue, selections } = selectionServiceOn(ts, { rows: sqlItemsResource(file) }))
    })
    after(async () => {
      await catalogue?.close()
      await dir?.drop()
      await ts?.drop()
    })

    test('no member is frozen without a version: not complete, the reason names the version column and the fix', async () => {
      const view = await selections.create(AGENT, 'rows', {})
      const members = await selections.members(view.selection_id, 0, 100)
      assert.deepEqual(members.map((m) => [m.id, m.version]), [['a', 'v1'], ['d', 'null']])
      assert.equal(view.complete, false)
      const shape = view.incomplete_reasons.find((r) => r.code === 'SHAPE_MISMATCH')
      assert.ok(shape, JSON.stringify(view.incomplete_reasons))
      assert.deepEqual([shape.fields, shape.record_count], [['version'], 2])
      assert.match(shape.message, /2 record\(s\) of source "[^"]+" carry no version \(version field "version" null or empty\)/)
      assert.match(shape.message, /version_field/)
    })
  })
}

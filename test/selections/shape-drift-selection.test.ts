import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Actor } from '../../src/contract/index.js'
import type { Catalogue } from '../../src/resources/index.js'
import type { SelectionService } from '../../src/selections/index.js'
import { sendJson, startUpstream, type TestUpstream } from '../connectors/http/upstream-server.js'
import { STORE_KINDS, createTestStore, type TestStore } from '../support/stores.js'
import { selectionServiceOn } from './fixtures/selection-config.js'

// Issue #8: "the same silently shrank a selection from 540 records to 441 with nothing saying so". Here 99 of
// 540 records come back in a newer format that calls the field `state`: the selection must say it could not
// judge them, and can never be approved as complete.
const AGENT: Actor = { principal: 'prn_test_agent', name: 'agent', role: 'agent', scopes: { resources: '*', actions: '*' }, surface: 'http' }

const ROWS = Array.from({ length: 540 }, (_, i) => {
  const id = `sub_${String(i).padStart(4, '0')}`
  return i % 5 === 4 && i < 5 * 99 ? { _id: id, _rev: `1-${i}`, state: 'past_due', amt: i } : { _id: id, _rev: `1-${i}`, status: 'past_due', amt: i }
})

for (const kind of STORE_KINDS) {
  describe(`a selection over wrapped rows with a drifting field (${kind} store)`, () => {
    let upstream: TestUpstream
    let ts: TestStore
    let catalogue: Catalogue
    let selections: SelectionService

    before(async () => {
      assert.equal(ROWS.filter((r) => 'state' in r).length, 99)
      // a CouchDB-like shape: rows[].doc, keyset paging by the last key (startkey="…" inclusive, skip=1 past it)
      upstream = await startUpstream((req, res) => {
        const start = req.url.searchParams.get('startkey')
        const limit = Number(req.url.searchParams.get('limit'))
        const skip = Number(req.url.searchParams.get('skip') ?? 0)
        const from = start === null ? skip : ROWS.findIndex((r) => JSON.stringify(r._id) === start) + skip
        const rows = ROWS.slice(from, from + limit).map((doc) => ({ id: doc._id, key: doc._id, doc }))
        sendJson(res, 200, { total_rows: ROWS.length, rows })
      })
      ts = await createTestStore(kind)
      const resource = (fieldPaths: Record<string, string>) => ({
        environment: { name: 'couch-test' },
        connector: {
          kind: 'http',
          sources: [{ name: 'couch', base_url: upstream.origin }],
          list: {
            path: '/subs/_all_docs',
            query: { include_docs: 'true' },
            page_size_param: 'limit',
            items_path: 'rows',
            record_path: 'doc',
            pagination: { style: 'keyset', field: 'id', param: 'startkey', encoding: 'json', skip_param: 'skip' },
          },
          get: { path: '/subs/{id}' },
          field_paths: fieldPaths,
          version: { from: 'field', field: 'version' },
        },
        fields: { id: 'string', status: 'string', amount: 'number', version: 'string' },
        review_fields: ['id', 'status', 'amount'],
      })
      ;({ catalogue, selections } = selectionServiceOn(ts, {
        subs: resource({ id: '_id', version: '_rev', amount: 'amt' }),
      }))
    })
    after(async () => {
      await catalogue?.close()
      await ts?.drop()
      await upstream?.close()
    })

    test('441 members, and the selection says 99 records could not be judged: not complete, never usable', async () => {
      const view = await selections.create(AGENT, 'subs', { filter: { status: 'past_due' }, page_size: 50 })
      assert.equal(view.count, 441)
      // every page after the first started at the last key read, JSON-encoded, and skipped past it
      const later = upstream.seen.filter((r) => r.url.searchParams.has('startkey'))
      assert.ok(later.length >= 10 && later.every((r) => /^"sub_\d{4}"$/.test(r.url.searchParams.get('startkey')!) && r.url.searchParams.get('skip') === '1'))
      assert.equal(view.complete, false)
      assert.deepEqual(
        view.incomplete_reasons.map((r) => [r.code, r.fields, r.record_count]),
        [['SHAPE_MISMATCH', ['status'], 99]],
      )
      const record = await selections.load(AGENT, view.selection_id)
      assert.throws(() => selections.assertUsable(record), (e: { code?: string }) => e.code === 'selection_incomplete')
    })
  })
}

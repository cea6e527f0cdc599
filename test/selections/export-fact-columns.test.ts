import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { parseConfig } from '../../src/config/index.js'
import { sendJson, startUpstream, type TestUpstream } from '../connectors/http/upstream-server.js'
import { csvRecords, csvRows } from '../support/csv-rows.js'
import { startGatewayOn, type GatewayFixture } from '../support/gateway-fixture.js'
import { createTempDir, type TempDir } from '../support/stores.js'

/**
 * A resource whose records have fields named like the CSV's fact columns (`selection_complete`, `frozen_version`):
 * the facts keep their documented names and the record's fields are the ones renamed with a leading `_`. Before, the
 * record's `selection_complete` took the name, and a reader checking it read `yes` from the record on an incomplete
 * selection. A plain HTTP upstream unlike the demo: ids with a comma, quotes and a line break, versions in a field.
 */
const RECORDS = [
  { id: 'a,"1"\n', selection_complete: 'true', frozen_version: 'mine', rev: 4 },
  { id: 'b,"2"\n', selection_complete: 'true', frozen_version: 'mine', rev: 9 },
]

describe('CSV fact columns keep their names when a record has fields named like them (an HTTP upstream)', () => {
  let upstream: TestUpstream
  let dir: TempDir
  let gw: Omit<GatewayFixture, 'dir' | 'upstreamUrl' | 'storeUrl'>
  before(async () => {
    upstream = await startUpstream((req, res) => {
      // one record a page, the cursor its index: a budget of one record leaves the walk incomplete
      const at = Number(req.url.searchParams.get('after') ?? 0)
      sendJson(res, 200, { data: RECORDS.slice(at, at + 1), next: at + 1 < RECORDS.length ? String(at + 1) : null })
    })
    dir = await createTempDir('warrant-fact-columns-')
    const config = parseConfig({
      store: `sqlite:${join(dir.path, 'warrant.db')}`,
      resources: {
        docs: {
          environment: { name: 'docs-env' },
          connector: {
            kind: 'http',
            sources: [{ name: 'docs', base_url: upstream.origin }],
            list: { path: '/docs', items_path: 'data', page_size_param: 'n', pagination: { style: 'cursor', param: 'after', next_cursor_path: 'next' } },
            get: { path: '/docs/{id}' },
            version: { from: 'field', field: 'rev' },
          },
          fields: { id: 'string', selection_complete: 'string', frozen_version: 'string', rev: 'integer' },
          review_fields: ['id', 'selection_complete', 'frozen_version'],
        },
      },
    })
    gw = await startGatewayOn(config, { resources: ['docs'] })
  })
  after(async () => {
    await gw?.close()
    await upstream?.close()
    await dir?.drop()
  })

  test('an incomplete selection: selection_complete reads false on every row; the records’ own fields under _-names', async () => {
    const auth = { authorization: `Bearer ${gw.tokens.agent}` }
    const res = await fetch(`${gw.base}/v1/resources/docs/selections`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ budget: { max_items: 1 }, page_size: 1 }) })
    const sel = (await res.json()) as any
    assert.equal(res.status, 201, JSON.stringify(sel))
    assert.equal(sel.complete, false)
    const csv = await (await fetch(`${gw.base}/v1/selections/${sel.selection_id}/export?format=csv`, { headers: auth })).text()
    assert.deepEqual(csvRows(csv)[0]!.map((c) => c.text).slice(0, 5), ['selection_complete', 'selection_state', 'id', '_selection_complete', '_frozen_version'])
    const rows = csvRecords(csv)
    assert.equal(rows.length, sel.count)
    for (const row of rows) {
      assert.deepEqual([row.selection_complete, row._selection_complete, row._frozen_version, row.id], ['false', 'true', 'mine', RECORDS[0]!.id])
      assert.equal(row.frozen_version, '4', 'the frozen version, not the record’s field of that name')
    }
  })
})

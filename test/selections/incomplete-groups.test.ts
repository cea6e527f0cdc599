import assert from 'node:assert/strict'
import type { ServerResponse } from 'node:http'
import { after, before, describe, test } from 'node:test'
import { renderSelection } from '../../src/cli/render-selection.js'
import type { Actor } from '../../src/contract/index.js'
import type { Catalogue } from '../../src/resources/index.js'
import type { SelectionService, SelectionView } from '../../src/selections/index.js'
import { RecordsSection } from '../../src/ui/selection-parts.js'
import { sendJson, startUpstream, type SeenRequest, type TestUpstream } from '../connectors/http/upstream-server.js'
import { STORE_KINDS, createTestStore, type TestStore } from '../support/stores.js'
import { selectionServiceOn } from './fixtures/selection-config.js'

const AGENT: Actor = { principal: 'prn_test_agent', name: 'agent', role: 'agent', scopes: { resources: '*', actions: '*' }, surface: 'http' }
const TICKETS = ['t1', 't2', 't3', 't4', 't5', 't6'].map((id, i) => ({ id, queue: i < 2 ? 'billing' : 'support', rev: 1 }))
/** The page (0-based) from which the helpdesk answers 503; null: it answers every page. */
let downFrom: number | null = null

/** A helpdesk API (not the demo's shape): two tickets a page, the cursor a page number. */
function helpdesk(req: SeenRequest, res: ServerResponse) {
  const page = Number(req.url.searchParams.get('cursor') ?? 0)
  if (downFrom !== null && page >= downFrom) return sendJson(res, 503, { error: 'maintenance' })
  const tickets = TICKETS.slice(page * 2, page * 2 + 2)
  sendJson(res, 200, { items: tickets, next_cursor: (page + 1) * 2 < TICKETS.length ? String(page + 1) : null })
}

const html = async (node: unknown) => String(await (node as { toString(): string | Promise<string> }).toString())

/**
 * A group count is a count of the records the walk returned. Over an incomplete walk (the upstream down) those
 * are not every record the filter matches, so no group may say it is complete: "queue: complete, 0 records"
 * read as "no ticket is in any queue".
 */
for (const kind of STORE_KINDS)
  describe(`group counts of an incomplete selection (${kind} store)`, () => {
    let up: TestUpstream | undefined
    let ts: TestStore | undefined
    let catalogue: Catalogue | undefined
    let selections: SelectionService
    before(async () => {
      up = await startUpstream(helpdesk)
      ts = await createTestStore(kind)
      ;({ catalogue, selections } = selectionServiceOn(ts, {
        tickets: {
          environment: { name: 'helpdesk' },
          connector: { kind: 'http', sources: [{ name: 'desk', base_url: up.origin }], timeout_ms: 2000, list: { path: '/tickets', pagination: { style: 'cursor' } }, get: { path: '/tickets/{id}' }, version: { from: 'field', field: 'rev' } },
          fields: { id: 'string', queue: 'string', rev: 'integer' },
          review_fields: ['id', 'queue'],
          group_by: ['queue'],
        },
        // a PostgreSQL upstream whose server is down (nothing listens on port 9)
        orders: {
          environment: { name: 'shop' },
          connector: { kind: 'sql', url: 'postgres://postgres@127.0.0.1:9/nowhere', table: 'orders' },
          fields: { id: 'string', state: 'string', updated_at: 'timestamp' },
          review_fields: ['id', 'state'],
          version_field: 'updated_at',
          group_by: ['state'],
        },
      }))
    })
    after(async () => {
      await catalogue?.close()
      await ts?.drop()
      await up?.close()
    })

    const checkIncomplete = async (view: SelectionView, field: string) => {
      assert.equal(view.complete, false)
      const group = view.groups.find((g) => g.field === field)!
      assert.equal(group.complete, false, `an incomplete walk's group "${field}" says complete: ${JSON.stringify(group)}`)
      const cli = renderSelection(view)
      assert.doesNotMatch(cli, /and 0 more in 0 other value/, cli)
      assert.match(cli, /Groups \(only the \d+ record\(s\) the incomplete walk returned/, cli)
      const page = await html(RecordsSection({ selection: view, page: { ...view, records: view.records, next_cursor: null, page: { returned: view.records.length, limit: 50, ordering: 'id' } } as never, nav: { base: '/', limit: 50, paged: false, next: null }, types: {} }))
      assert.match(page, /only the records the incomplete inventory returned/, 'the review page says the counts cover only the returned records')
      assert.doesNotMatch(page, /other values<\/th><td class="num">0</, 'no "other values: 0" row claims nothing else exists')
    }

    /** the tickets selection, the helpdesk answering 503 from page `from` on */
    const ticketsDownFrom = async (from: number) => {
      downFrom = from
      try {
        return await selections.create(AGENT, 'tickets', { filter: {} })
      } finally {
        downFrom = null
      }
    }

    test('an http upstream answering 503 from the first page: the group is not complete, nothing reads as "complete: 0 records"', async () => {
      const view = await ticketsDownFrom(0)
      assert.equal(view.count, 0)
      await checkIncomplete(view, 'queue')
    })
    test('an http upstream failing after two pages: the counts of the returned tickets are not complete', async () => {
      const view = await ticketsDownFrom(2)
      assert.equal(view.count, 4)
      await checkIncomplete(view, 'queue')
    })
    test('a PostgreSQL upstream that is down: the group is not complete', async () => {
      await checkIncomplete(await selections.create(AGENT, 'orders', { filter: {} }), 'state')
    })
    test('a complete selection keeps complete groups', async () => {
      const view = await selections.create(AGENT, 'tickets', { filter: {} })
      assert.equal(view.complete, true)
      assert.deepEqual(view.groups, [{ field: 'queue', values: [{ value: 'support', count: 4 }, { value: 'billing', count: 2 }], distinct: 2, complete: true, other_count: 0 }])
      assert.match(renderSelection(view), /^Groups:$/m)
    })
  })

import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { ServerResponse } from 'node:http'
import type { Actor } from '../../src/contract/index.js'
import { sendJson, type SeenRequest } from '../connectors/http/upstream-server.js'
import { STORE_KINDS } from '../support/stores.js'
import { itemsSelectionService } from './items-service.js'

const AGENT: Actor = { principal: 'prn_test_agent', name: 'agent', role: 'agent', scopes: { resources: '*', actions: '*' }, surface: 'http' }
let items = ['r1', 'r2', 'r3', 'r4', 'r5', 'r6'].map((id) => ({ id, status: 'past_due', version: 1 }))
let failing = false

/** two records a page, an offset cursor; 503 while `failing` */
function lister(req: SeenRequest, res: ServerResponse) {
  if (failing) return sendJson(res, 503, { error: 'down' })
  if (req.url.pathname !== '/items') return sendJson(res, 404, { error: 'no' })
  const start = Number(req.url.searchParams.get('cursor') ?? 0)
  const page = items.slice(start, start + 2)
  const end = start + page.length
  sendJson(res, 200, { items: page, next_cursor: end < items.length ? String(end) : null })
}

for (const kind of STORE_KINDS) {
  describe(`recovery (${kind} store)`, () => {
    const env = itemsSelectionService(kind, lister)

    test('a recovery whose own walk failed (503) is walked again when asked again, not handed back incomplete until it expires', async () => {
      const { selections } = env
      const partial = await selections.create(AGENT, 'items', { filter: { status: 'past_due' }, budget: { max_pages: 1 } })
      assert.equal(partial.complete, false)
      assert.equal(partial.count, 2)
      failing = true
      let first
      try {
        first = await selections.recover(AGENT, partial.selection_id)
      } finally {
        failing = false
      }
      assert.equal(first.complete, false, 'the upstream was down: the first recovery is incomplete')
      assert.ok(first.incomplete_reasons.some((r) => r.code === 'SOURCE_UNAVAILABLE'), JSON.stringify(first.incomplete_reasons))
      // the upstream is back; the reason told the caller to retry
      const again = await selections.recover(AGENT, partial.selection_id)
      assert.equal(again.complete, true, `asked again once the upstream is back, the recovery is still the incomplete one (created: ${again.created}, same id: ${again.selection_id === first.selection_id}, reasons: ${JSON.stringify(again.incomplete_reasons.map((r) => r.code))})`)
    })
  })
}

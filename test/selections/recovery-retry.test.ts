import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { ServerResponse } from 'node:http'
import type { Actor } from '../../src/contract/index.js'
import { sendJson, type SeenRequest } from '../connectors/http/upstream-server.js'
import { STORE_KINDS } from '../support/stores.js'
import { itemsSelectionService } from './items-service.js'

const AGENT: Actor = { principal: 'prn_test_agent', name: 'agent', role: 'agent', scopes: { resources: '*', actions: '*' }, surface: 'http' }
let items = ['r1', 'r2', 'r3', 'r4', 'r5', 'r6'].map((id) => ({ id, status: 'past_due', version: 1 }))
/** While set, requests are held until `failing.at` of them arrived, then all answered 503. */
let failing: { at: number; held: ServerResponse[] } | null = null

/** two records a page, an offset cursor */
function lister(req: SeenRequest, res: ServerResponse) {
  if (failing) {
    failing.held.push(res)
    if (failing.held.length >= failing.at) for (const held of failing.held.splice(0)) sendJson(held, 503, { error: 'down' })
    return
  }
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
      failing = { at: 1, held: [] }
      let first
      try {
        first = await selections.recover(AGENT, partial.selection_id)
      } finally {
        failing = null
      }
      assert.equal(first.complete, false, 'the upstream was down: the first recovery is incomplete')
      assert.ok(first.incomplete_reasons.some((r) => r.code === 'SOURCE_UNAVAILABLE'), JSON.stringify(first.incomplete_reasons))
      // the upstream is back; the reason told the caller to retry
      const again = await selections.recover(AGENT, partial.selection_id)
      assert.equal(again.complete, true, `asked again once the upstream is back, the recovery is still the incomplete one (created: ${again.created}, same id: ${again.selection_id === first.selection_id}, reasons: ${JSON.stringify(again.incomplete_reasons.map((r) => r.code))})`)
    })
    test('five recoveries asked at once, every walk failing together (503): one incomplete recovery, the others handed it', async () => {
      const { selections, store } = env
      const partial = await selections.create(AGENT, 'items', { filter: { status: 'past_due' }, budget: { max_pages: 1 } })
      // the five first reads are answered only once all five were asked: every walk runs at once, none frozen before
      failing = { at: 5, held: [] }
      let answers
      try {
        answers = await Promise.all(Array.from({ length: 5 }, () => selections.recover(AGENT, partial.selection_id)))
      } finally {
        failing = null
      }
      assert.ok(answers.every((a) => !a.complete))
      assert.equal(new Set(answers.map((a) => a.selection_id)).size, 1, answers.map((a) => `${a.selection_id} created: ${a.created}`).join(', '))
      assert.equal(answers.filter((a) => a.created).length, 1)
      const frozen = await store.store.db.selectFrom('selections').select('id').where('origin', '=', JSON.stringify({ kind: 'recovery', selection_id: partial.selection_id })).execute()
      assert.equal(frozen.length, 1)
    })
  })
}

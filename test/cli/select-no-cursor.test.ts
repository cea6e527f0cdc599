import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { Actor } from '../../src/contract/index.js'
import { renderSelection } from '../../src/cli/render-selection.js'
import { itemsSelectionService } from '../selections/items-service.js'
import { stallingLister } from '../selections/stalling-lister.js'

const AGENT: Actor = { principal: 'prn_test_agent', name: 'agent', role: 'agent', scopes: { resources: '*', actions: '*' }, surface: 'http' }
const lister = stallingLister(['r1', 'r2', 'r3', 'r4', 'r5', 'r6'].map((id) => ({ id, status: 'past_due', version: 1 })))

/**
 * `warrant select` printed an incomplete selection's reasons as the walk wrote them for a search: "the cursor
 * resumes it", "retry after 2 s with the cursor". A selection is never continued (select takes no cursor, nor does
 * POST …/selections): it is created again. The reasons of a selection's walk now say so. A real loopback upstream
 * and a real selection service (SQLite); the text `warrant select` prints.
 */
describe('warrant select never tells the person to continue a selection with a cursor', () => {
  const env = itemsSelectionService('sqlite', lister.handler)
  const create = async (as: typeof lister.state.mode, budget: Record<string, number> = {}) => {
    lister.state.mode = as
    try {
      return await env.selections.create(AGENT, 'items', { filter: { status: 'past_due' }, budget })
    } finally {
      lister.release()
    }
  }

  for (const [name, as, budget, code, again] of [
    ['a source down (503)', 'down', {}, 'SOURCE_UNAVAILABLE', /again/],
    ['its page budget', 'up', { max_pages: 1 }, 'CLIENT_LIMIT_REACHED', /larger budget/],
    ['its deadline', 'slow', { deadline_ms: 300 }, 'TIME_BUDGET_EXCEEDED', /longer deadline/],
  ] as const)
    test(`stopped by ${name}: the reason says to create the selection again, never to use a cursor`, async () => {
      const view = await create(as, budget)
      assert.equal(view.complete, false)
      assert.ok(view.incomplete_reasons.some((r) => r.code === code), JSON.stringify(view.incomplete_reasons))
      const text = renderSelection(view)
      assert.doesNotMatch(text, /cursor/i, text)
      assert.match(text, again, text)
    })
})

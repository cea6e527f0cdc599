import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { searchAll } from '../../src/inventory/index.js'
import { searchRequestSchema } from '../../src/resources/search.js'
import { selectionRequestSchema } from '../../src/selections/schemas.js'
import { createModelConnector, seedCollection, type ReadFault } from '../support/model-connector.js'
import { TEST_SCOPE, testCodec } from './helpers.js'

/**
 * A walk whose deadline ran out while a page was in flight asks for twice that deadline (`retry_with_deadline`,
 * `minimum_deadline_ms`). A search at 200000 ms asked for 400000, which every search surface (HTTP, MCP, the CLI's
 * --deadline-ms) refuses above 300000: the continuation named a request no client could send. A selection at the
 * hour it may take asked for two. The ask is now held to the longest deadline the surface takes; where the walk
 * already had it, a longer deadline cannot help and the answer says to narrow the query instead.
 */
const accepts = {
  search: (ms: number) => searchRequestSchema.safeParse({ budget: { deadline_ms: ms } }).success,
  selection: (ms: number) => selectionRequestSchema.safeParse({ budget: { deadline_ms: ms } }).success,
}

/** The longest deadline each surface takes, read from its own request schema. */
function longest(surface: keyof typeof accepts): number {
  let lo = 1
  let hi = 100_000_000
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2)
    if (accepts[surface](mid)) lo = mid
    else hi = mid - 1
  }
  return lo
}

/**
 * Runs a real walk whose one page never answers in time: the clock jumps to 30 ms before the deadline after the
 * walk starts, so the page in flight is cut by the walk's own timer at once, whatever the deadline.
 */
async function walkCutInFlight(deadlineMs: number, options: Record<string, unknown>) {
  const connector = createModelConnector({ collection: seedCollection(['only'], 3), snapshots: true, onRead: (): ReadFault => ({ kind: 'delay', ms: 10_000 }) })
  const start = Date.parse('2025-03-08T14:20:11Z')
  let calls = 0
  const clock = { now: () => (calls++ === 0 ? start : start + deadlineMs - 30) }
  return searchAll(connector, { resource: 'subscriptions', filter: {} }, { deadlineMs }, { scope: TEST_SCOPE, cursorCodec: testCodec(), clock, ...options })
}

describe('a walk cut by its deadline asks only for a deadline its surface takes', () => {
  for (const surface of ['search', 'selection'] as const) {
    it(`${surface}: below the longest deadline, the ask is at most that; at it, narrow the query instead`, async () => {
      const max = longest(surface)
      const options = { maxDeadlineMs: max, ...(surface === 'selection' ? { resumable: false } : {}) }

      const below = await walkCutInFlight(Math.floor((max * 2) / 3), options)
      assert.deepEqual(below.incomplete_reasons.map((r) => r.code), ['TIME_BUDGET_EXCEEDED'])
      const c = below.continuation
      assert.ok(c && c.kind === 'retry_with_deadline', JSON.stringify(c))
      assert.ok(accepts[surface](c.minimum_deadline_ms), `${surface} refuses the deadline its own answer asked for: ${c.minimum_deadline_ms}`)
      assert.equal(c.minimum_deadline_ms, max)

      const at = await walkCutInFlight(max, options)
      assert.deepEqual(at.incomplete_reasons.map((r) => r.code), ['TIME_BUDGET_EXCEEDED'])
      const n = at.continuation
      assert.ok(n && n.kind === 'narrow_query', `no longer deadline can be asked for: ${JSON.stringify(n)}`)
      assert.match(n.message, new RegExp(`${max} ms`))
      assert.match(n.message, /narrow/)

      const { SEARCH_MAX_DEADLINE_MS, SELECTION_MAX_DEADLINE_MS } = await import('../../src/contract/index.js')
      assert.equal(max, surface === 'search' ? SEARCH_MAX_DEADLINE_MS : SELECTION_MAX_DEADLINE_MS, 'the surface takes the contract constant')
    })
  }

  it('the library without a surface keeps asking for twice the deadline', async () => {
    const walked = await walkCutInFlight(5_000, {})
    const c = walked.continuation
    assert.ok(c && c.kind === 'retry_with_deadline', JSON.stringify(c))
    assert.equal(c.minimum_deadline_ms, 10_000)
  })
})

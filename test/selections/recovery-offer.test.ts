import assert from 'node:assert/strict'
import type { ServerResponse } from 'node:http'
import { describe, test } from 'node:test'
import type { Actor } from '../../src/contract/index.js'
import { selectionSummary } from '../../src/mcp/tools/selections.js'
import { MissingSection } from '../../src/ui/missing-evidence.js'
import { sendJson, type SeenRequest } from '../connectors/http/upstream-server.js'
import { STORE_KINDS } from '../support/stores.js'
import { itemsSelectionService } from './items-service.js'

const AGENT: Actor = { principal: 'prn_test_agent', name: 'agent', role: 'agent', scopes: { resources: '*', actions: '*' }, surface: 'http' }
const ITEMS = ['r1', 'r2', 'r3', 'r4', 'r5', 'r6'].map((id) => ({ id, status: 'past_due', version: 1 }))
/** The page (0-based) from which the upstream answers 503; null: it answers every page. */
let downFrom: number | null = null

/** two records a page, the cursor a page number */
function lister(req: SeenRequest, res: ServerResponse) {
  const page = Number(req.url.searchParams.get('cursor') ?? 0)
  if (downFrom !== null && page >= downFrom) return sendJson(res, 503, { error: 'down' })
  sendJson(res, 200, { items: ITEMS.slice(page * 2, page * 2 + 2), next_cursor: (page + 1) * 2 < ITEMS.length ? String(page + 1) : null })
}

const viewer = { actor: { principal: 'reviewer', roles: ['reviewer'] }, csrf: 'x' } as never
const html = async (node: unknown) => String(await (node as { toString(): string | Promise<string> }).toString())

/**
 * A recovery restricts an incomplete selection to the records it returned. With none returned (the upstream down
 * from the first page) there is nothing to restrict to, and POST …/recover answers 409: no surface may offer it.
 * With some returned, the offer says what it cannot do: the records the walk never reached are not in it.
 */
for (const kind of STORE_KINDS)
  describe(`the recovery offered for an incomplete selection (${kind} store)`, () => {
    const env = itemsSelectionService(kind, lister)
    const createDownFrom = async (from: number) => {
      downFrom = from
      try {
        return await env.selections.create(AGENT, 'items', { filter: { status: 'past_due' } })
      } finally {
        downFrom = null
      }
    }

    test('an upstream down from the first page: no recovery is offered (it would be refused), on HTTP, MCP and the review page', async () => {
      const view = await createDownFrom(0)
      assert.equal(view.complete, false)
      assert.equal(view.count, 0)
      assert.equal(view.recovery, null, `a recovery of the 0 records offered: ${JSON.stringify(view.recovery)}`)
      await assert.rejects(env.selections.recover(AGENT, view.selection_id), (e: { code?: string }) => e.code === 'conflict')
      assert.doesNotMatch(selectionSummary(view), /To act on the 0 records/)
      const missing = await html(MissingSection({ selection: view, viewer }))
      assert.doesNotMatch(missing, /Restrict to the 0 returned records/)
      assert.doesNotMatch(missing, /\/recover"/, 'no form posts to the recovery the service refuses')
    })
    test('an upstream failing after two pages: the recovery says it never holds the records the walk did not reach', async () => {
      const view = await createDownFrom(2)
      assert.equal(view.count, 4)
      assert.ok(view.recovery)
      assert.match(view.recovery.message, /not the records the walk never reached/)
      assert.match(selectionSummary(view), /To act on the 4 records it did return,.*not the records the walk never reached/)
      assert.match(await html(MissingSection({ selection: view, viewer })), /not the records the walk never reached/)
    })
    test("the MCP summary never tells the agent to continue a selection with the walk's cursor: create_selection takes none", async () => {
      const view = await createDownFrom(1)
      assert.equal(view.continuation?.kind, 'retry_after')
      const text = selectionSummary(view)
      assert.doesNotMatch(text, /continue with the cursor/, text)
      assert.match(text, /create the selection again after \S+Z/, text)
    })
  })

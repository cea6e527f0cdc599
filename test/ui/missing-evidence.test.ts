import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { Actor } from '../../src/contract/index.js'
import type { SelectionView } from '../../src/selections/index.js'
import { MissingSection } from '../../src/ui/missing-evidence.js'
import { itemsSelectionService } from '../selections/items-service.js'
import { stallingLister } from '../selections/stalling-lister.js'

const AGENT: Actor = { principal: 'prn_test_agent', name: 'agent', role: 'agent', scopes: { resources: '*', actions: '*' }, surface: 'http' }
const lister = stallingLister(['r1', 'r2', 'r3', 'r4'].map((id) => ({ id, status: 'past_due', version: 1 })))

const viewer = { actor: { principal: 'reviewer', roles: ['reviewer'] }, csrf: 'x' } as never
/** The retry choice's title and explanation, as text. */
const retryChoice = async (selection: SelectionView) => {
  const html = String(await (MissingSection({ selection, viewer }) as unknown as { toString(): string | Promise<string> }).toString())
  const form = /<form class="choice" method="post" action="[^"]*\/retry"[^>]*>([\s\S]*?)<\/form>/.exec(html)
  assert.ok(form, `a retry form: ${html}`)
  return form[1]!.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ')
}

/**
 * The review page's retry choice said "Retry with a longer deadline" whatever stopped the walk: for a source that
 * was down (503) a longer deadline never helps, walking again once it is back does. It now follows the reasons.
 * A real loopback upstream and a real selection service (SQLite), the section rendered as the page renders it.
 */
describe('the review page retry choice follows why the walk stopped', () => {
  const env = itemsSelectionService('sqlite', lister.handler)
  const create = async (as: 'down' | 'slow') => {
    lister.state.mode = as
    try {
      return await env.selections.create(AGENT, 'items', { filter: { status: 'past_due' }, ...(as === 'slow' ? { budget: { deadline_ms: 300 } } : {}) })
    } finally {
      lister.release()
    }
  }

  test('a source down (503): retry once it is back, naming the wait; never a longer deadline', async () => {
    const view = await create('down')
    const down = view.incomplete_reasons.find((r) => r.code === 'SOURCE_UNAVAILABLE')
    assert.ok(down, JSON.stringify(view.incomplete_reasons))
    const text = await retryChoice(view)
    assert.doesNotMatch(text, /Retry with a longer deadline|a longer deadline helps/, text)
    assert.match(text, /once the source is back/i, text)
    assert.ok(down.retry_after_seconds !== undefined, 'the walk names a wait')
    assert.match(text, new RegExp(`after ${down.retry_after_seconds} s`), text)
  })

  test("the walk's deadline ran out: retry with a longer deadline, and nothing about a source being down", async () => {
    const view = await create('slow')
    assert.ok(view.incomplete_reasons.some((r) => r.code === 'TIME_BUDGET_EXCEEDED'), JSON.stringify(view.incomplete_reasons))
    const text = await retryChoice(view)
    assert.match(text, /Retry with a longer deadline/, text)
    assert.doesNotMatch(text, /source is back/i, text)
  })

  test('both (one source down, the deadline out on another): the choice says both', async () => {
    const down = await create('down')
    const slow = await create('slow')
    const text = await retryChoice({ ...down, incomplete_reasons: [...down.incomplete_reasons, ...slow.incomplete_reasons] })
    assert.match(text, /longer deadline/i, text)
    assert.match(text, /once the source is back/i, text)
  })
})

import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { ServerResponse } from 'node:http'
import type { Actor } from '../../src/contract/index.js'
import { sendJson, type SeenRequest } from '../connectors/http/upstream-server.js'
import { STORE_KINDS } from '../support/stores.js'
import { itemsSelectionService } from './items-service.js'

const ALICE: Actor = { principal: 'prn_test_alice', name: 'alice', role: 'reviewer', scopes: { resources: '*', actions: '*' }, surface: 'ui' }
const BOB: Actor = { ...ALICE, principal: 'prn_test_bob', name: 'bob' }
const items = ['r1', 'r2', 'r3', 'r4', 'r5', 'r6'].map((id) => ({ id, status: 'past_due', version: 1 }))
/** While set, list requests are held until `failing.at` of them arrived, then all answered 503. */
let failing: { at: number; held: ServerResponse[] } | null = null

/** two records a page, an offset cursor */
function lister(req: SeenRequest, res: ServerResponse) {
  if (req.url.pathname !== '/items') return sendJson(res, 404, { error: 'no' })
  if (failing) {
    failing.held.push(res)
    if (failing.held.length >= failing.at) for (const held of failing.held.splice(0)) sendJson(held, 503, { error: 'down' })
    return
  }
  const start = Number(req.url.searchParams.get('cursor') ?? 0)
  const page = items.slice(start, start + 2)
  const end = start + page.length
  sendJson(res, 200, { items: page, next_cursor: end < items.length ? String(end) : null })
}

/**
 * A retry (the same selector walked again under a longer deadline: the review page's "Retry the inventory") is one
 * object per incomplete selection and principal, as a recovery is: asked again it is the complete retry already made,
 * and asked several times at once it is one frozen selection, so a plan page never proposes the same action twice.
 */
for (const kind of STORE_KINDS) {
  describe(`a retry is created once (${kind} store)`, () => {
    const env = itemsSelectionService(kind, lister)
    const incomplete = async () => {
      const partial = await env.selections.create(BOB, 'items', { filter: { status: 'past_due' }, budget: { max_pages: 1 } })
      assert.equal(partial.complete, false)
      return partial.selection_id
    }
    const retriesOf = async (of: string) =>
      (await env.store.store.db.selectFrom('selections').select(['id', 'state', 'origin']).where('origin', 'is not', null).execute()).filter(
        (s) => (JSON.parse(s.origin!) as { selection_id?: string }).selection_id === of,
      )

    test('asked again, under another deadline: the complete retry already made, nothing walked; another principal walks its own', async () => {
      const { selections, up } = env
      const of = await incomplete()
      const first = await selections.retry(ALICE, of, { deadline_ms: 600_000 })
      assert.equal(first.created, true)
      assert.equal(first.complete, true)
      assert.equal(first.count, 6)
      const reads = up.seen.length
      const again = await selections.retry(ALICE, of, { deadline_ms: 1_800_000 })
      assert.equal(again.created, false)
      assert.equal(again.selection_id, first.selection_id)
      assert.equal(up.seen.length, reads, 'nothing read again')
      const bobs = await selections.retry(BOB, of, { deadline_ms: 600_000 })
      assert.equal(bobs.created, true)
      assert.notEqual(bobs.selection_id, first.selection_id)
      assert.equal((await retriesOf(of)).length, 2)
    })

    test('a retry whose own walk failed (503) is walked again when asked again, not handed back incomplete', async () => {
      const { selections } = env
      const of = await incomplete()
      failing = { at: 1, held: [] }
      let first
      try {
        first = await selections.retry(ALICE, of, { deadline_ms: 600_000 })
      } finally {
        failing = null
      }
      assert.equal(first.complete, false)
      const again = await selections.retry(ALICE, of, { deadline_ms: 600_000 })
      assert.equal(again.created, true)
      assert.equal(again.complete, true)
      assert.notEqual(again.selection_id, first.selection_id)
    })

    test('five at once, every walk complete: one frozen retry, the others handed it', async () => {
      const { selections } = env
      const of = await incomplete()
      const answers = await Promise.all(Array.from({ length: 5 }, () => selections.retry(ALICE, of, { deadline_ms: 600_000 })))
      assert.equal(new Set(answers.map((a) => a.selection_id)).size, 1)
      assert.equal(answers.filter((a) => a.created).length, 1, 'one call created it')
      assert.deepEqual((await retriesOf(of)).map((s) => [s.id, s.state]), [[answers[0]!.selection_id, 'frozen']])
    })

    test('five at once, every walk failing together (503): still one frozen retry, incomplete', async () => {
      const { selections } = env
      const of = await incomplete()
      // the five first pages are answered only once all five were asked: every walk runs at once, none frozen before
      failing = { at: 5, held: [] }
      let answers
      try {
        answers = await Promise.all(Array.from({ length: 5 }, () => selections.retry(ALICE, of, { deadline_ms: 600_000 })))
      } finally {
        failing = null
      }
      assert.ok(answers.every((a) => !a.complete))
      assert.equal(new Set(answers.map((a) => a.selection_id)).size, 1, answers.map((a) => a.selection_id).join(', '))
      assert.equal((await retriesOf(of)).length, 1)
    })

    test('a deadline the form does not allow is refused before anything is looked up or walked', async () => {
      const { selections, up } = env
      const of = await incomplete()
      const reads = up.seen.length
      for (const deadline_ms of [0, -1, 1.5, 3_600_001, Number.NaN]) await assert.rejects(selections.retry(ALICE, of, { deadline_ms }), { code: 'invalid_request' })
      assert.equal(up.seen.length, reads)
      assert.deepEqual(await retriesOf(of), [])
    })
  })
}

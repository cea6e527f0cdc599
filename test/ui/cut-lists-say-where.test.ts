import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { LookalikeNotice } from '../../src/ui/lookalike-notice.js'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { type ReviewHttpSession, openReviewSession } from '../support/review-session.js'

const html = async (node: unknown) => String(await (node as { toString(): string | Promise<string> }).toString())

/**
 * A list cut short on a review page said "and 3 more groups." and stopped: the reviewer was not told where the rest
 * are. Warrant keeps only the first groups of look-alike ids, so no page lists the others; every member id is in the
 * manifest (this page's, paged, each id spelled) and in the export, and the agent's words whole in the action's
 * parameters. The notice now says so, with the links.
 */
describe('review pages: a list cut short says where the rest can be read', () => {
  const lookalikes = {
    groups: [[{ id: 'r002', code_points: [] }, { id: ' r002 ', code_points: ['U+0020'] }]],
    more_groups: 3,
    named: [{ word: 'r0O2', word_code_points: ['U+004F'], id: 'r002', id_code_points: ['U+0030'] }],
    more_named: 2,
  }

  test('more look-alike groups: the manifest on the page and the export are linked', async () => {
    const page = await html(LookalikeNotice({ lookalikes, of: 'plan', selectionId: 'sel_1' } as never))
    assert.match(page, /and 3 more groups, not listed: only the first 20 are kept\./)
    assert.match(page, /<a href="#records-manifest">[^<]*manifest/)
    assert.match(page, /href="\/review\/selections\/sel_1\/export\?format=csv"/)
  })

  test("more of the agent's words: the action's parameters hold them whole", async () => {
    const page = await html(LookalikeNotice({ lookalikes, of: 'plan', selectionId: 'sel_1' } as never))
    assert.match(page, /and 2 more words, not listed: the agent(&#39;|')s words are shown whole under <a href="#action-params">/)
  })
})

/**
 * The queue lists the newest 50 plans waiting and said "(more exist: the oldest are not listed)": no page, route or
 * command listed the others. It now links to the next older ones (`?older=`, the position after the last listed), and
 * a position the page did not give is refused as bad input, naming the parameter.
 */
describe('review queue: more plans waiting than listed', () => {
  let fx: GatewayFixture
  let reviewer: ReviewHttpSession
  const planIds: string[] = []
  before(async () => {
    fx = await startDemoGateway({ store: 'sqlite', count: 200 })
    const agent = await fx.gateway.principals.authenticate(fx.tokens.agent, 'http')
    const rows = (await fx.gateway.selections.create(agent, 'subscriptions', { filter: {}, page_size: 100 } as never)).records.slice(0, 52)
    assert.equal(rows.length, 52)
    for (const row of rows) {
      const selection = await fx.gateway.selections.create(agent, 'subscriptions', { filter: { id: { in: [row.id] } } } as never)
      planIds.push((await fx.gateway.plans.propose(agent, selection.selection_id, { action: { type: 'pause_collection', params: { reason: 'queue test' } } } as never)).plan_id)
    }
    reviewer = await openReviewSession(fx.base, fx.tokens.reviewer)
  })
  after(async () => {
    await fx?.close()
  })

  test('the newest are listed, with a link to the older ones, which lists the rest', { timeout: 60_000 }, async () => {
    const first = await reviewer.get('/review')
    assert.equal(first.status, 200)
    const listed = [...first.html.matchAll(/data-plan-id="([^"]+)"/g)].map((m) => m[1])
    assert.equal(listed.length, 50)
    const link = /<a href="(\/review\?older=[^"]+)"[^>]*data-testid="queue-older"/.exec(first.html)
    assert.ok(link, 'a link to the older plans waiting')
    const older = await reviewer.get(link[1]!.replace(/&amp;/g, '&'))
    assert.equal(older.status, 200)
    const rest = [...older.html.matchAll(/data-plan-id="([^"]+)"/g)].map((m) => m[1])
    assert.deepEqual([...listed, ...rest].sort(), [...planIds].sort(), 'every plan waiting, once')
    assert.doesNotMatch(older.html, /data-testid="queue-older"/)
  })

  test('a position the page did not give is refused, naming the parameter', async () => {
    const bad = await reviewer.get('/review?older=not-a-position')
    assert.equal(bad.status, 400)
    assert.match(bad.html, /older/)
  })
})

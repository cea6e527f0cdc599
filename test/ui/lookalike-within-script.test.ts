import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { type Actor, revealed } from '../../src/contract/index.js'
import { lookalikeIds } from '../../src/selections/index.js'
import { type OddUpstream, startOddUpstream, thingsResourceConfig } from '../plans/support/odd-upstream.js'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { pagePart as part, textOf } from '../support/review-page.js'
import { type ReviewHttpSession, openReviewSession } from '../support/review-session.js'

/**
 * Ids the upstream holds as separate records that are drawn alike in one script (Unicode's confusables, UTS #39):
 * capital I and small l, digit zero and capital O, "rn" and "m", dotless ı and i, the compatibility forms NFKC
 * folds (the ligature ﬁ, fullwidth letters, a mathematical bold digit, a superscript), and rarer rows of the table.
 */
const PAIRS = [
  ['admin-I', 'admin-l'],
  ['rnodel-7', 'model-7'],
  ['d\u0131sk-2', 'disk-2'],
  ['\uFB01le-3', 'file-3'],
  ['\uFF21\uFF22\uFF23-4', 'ABC-4'],
  ['n\u{1D7CF}-5', 'n1-5'],
  ['x\u00B2-6', 'x2-6'],
  // rows a short hand-picked table leaves out, from the whole of confusables.txt: Latin small capital s, a Bengali
  // digit four drawn as 8
  ['\uA731et-8', 'set-8'],
  ['r-\u09EA', 'r-8'],
] as const
/** The target the agent's words name with a capital O for the last zero. */
const TARGET = 'user-10'
const NAMED = 'user-1O'

describe('record ids drawn alike within one script are named on the plan page (an odd http upstream)', () => {
  let upstream: OddUpstream
  let fx: GatewayFixture
  let agent: Actor
  let reviewer: ReviewHttpSession
  before(async () => {
    const ordinary = Array.from({ length: 10_000 }, (_, i) => `user-${String(i).padStart(6, '0')}`)
    const ids = [...PAIRS.flat(), TARGET, ...ordinary]
    upstream = await startOddUpstream(ids.map((id) => ({ id, name: `name of ${id}`, status: 'open', note: 'n' })))
    fx = await startDemoGateway({ store: 'sqlite', count: 20, edit: (c) => void (c.resources.things = thingsResourceConfig(upstream.origin)) })
    const gw = fx.gateway
    agent = await gw.principals.authenticate((await gw.principals.issue({ name: 'things-agent', role: 'agent', scopes: { resources: ['things'], actions: '*' } })).token, 'http')
    reviewer = await openReviewSession(fx.base, fx.tokens.reviewer)
  })
  after(async () => {
    await fx?.close()
    await upstream?.close()
  })

  const proposed = async (ids: readonly string[], status: string) => {
    const selection = await fx.gateway.selections.create(agent, 'things', { filter: { id: { in: [...ids] } } })
    assert.equal(selection.complete, true)
    assert.equal(selection.count, ids.length)
    return fx.gateway.plans.propose(agent, selection.selection_id, { action: { type: 'set_status', params: { status } } })
  }

  test('each pair drawn alike is named, both ids shown with the code points where they differ', async () => {
    const plan = await proposed([...PAIRS.flat(), 'user-000123'], 'closed')
    const page = await reviewer.get(`/review/plans/${plan.plan_id}`)
    assert.equal(page.status, 200)
    const notice = textOf(part(page.html, 'lookalike-ids'))
    assert.match(notice, /look alike/i, notice)
    // one list item per group: both ids of each pair in one item, each as the pages show it
    const items = part(page.html, 'lookalike-ids').split('<li').slice(1).map(textOf)
    for (const [a, b] of PAIRS) assert.ok(items.some((item) => item.includes(revealed(a)) && item.includes(revealed(b))), `no group names ${a} and ${b}: ${notice}`)
    // the differing characters of both ids are spelled as code points: I (U+0049) beside l (U+006C), ı (U+0131) beside i
    for (const cp of ['U+0049', 'U+006C', 'U+0072 U+006E', 'U+006D', 'U+0131', 'U+0069', 'U+FB01', 'U+FF21', 'U+1D7CF', 'U+00B2'])
      assert.ok(notice.includes(cp), `the notice does not spell ${cp}: ${notice}`)
    // neither id of a pair is hidden: each stays readable as itself in the notice
    assert.ok(notice.includes('admin-I') && notice.includes('admin-l'), notice)
    // an ordinary id is in no group
    assert.ok(!notice.includes('user-000123'), notice)
  })

  test("the agent's words naming an id drawn like the target's (user-1O for user-10) are named beside it", async () => {
    const plan = await proposed([TARGET], `archived as ${NAMED}`)
    const page = await reviewer.get(`/review/plans/${plan.plan_id}`)
    const notice = textOf(part(page.html, 'lookalike-ids'))
    assert.ok(notice.includes(NAMED) && notice.includes(TARGET), notice)
    assert.ok(notice.includes('U+004F') && notice.includes('U+0030'), notice)
    assert.match(notice, /agent's words/, notice)
  })

  test('the selection page names them too, and the HTTP view carries them (lookalike_ids) with their code points', async () => {
    const selection = await fx.gateway.selections.create(agent, 'things', { filter: { id: { in: ['admin-I', 'admin-l', 'rnodel-7', 'model-7', 'user-000123'] } } })
    const page = await reviewer.get(`/review/selections/${selection.selection_id}`)
    assert.equal(page.status, 200)
    const notice = textOf(part(page.html, 'lookalike-ids'))
    assert.match(notice, /look alike/i, notice)
    for (const cp of ['U+0049', 'U+006C', 'U+0072 U+006E', 'U+006D']) assert.ok(notice.includes(cp), `the notice does not spell ${cp}: ${notice}`)
    assert.ok(notice.includes('admin-I') && notice.includes('admin-l') && !notice.includes('user-000123'), notice)
    // the view every surface renders: GET /v1/selections/{id}, as served
    const res = await fetch(`${fx.base}/v1/selections/${selection.selection_id}`, { headers: { authorization: `Bearer ${fx.tokens.reviewer}` } })
    assert.equal(res.status, 200)
    const view = (await res.json()) as { lookalike_ids?: { groups: { id: string; code_points: string[] }[][]; more_groups: number } }
    assert.deepEqual(view.lookalike_ids, {
      groups: [
        [{ id: 'admin-I', code_points: ['U+0049'] }, { id: 'admin-l', code_points: ['U+006C'] }],
        [{ id: 'model-7', code_points: ['U+006D'] }, { id: 'rnodel-7', code_points: ['U+0072', 'U+006E'] }],
      ],
      more_groups: 0,
    })
  })

  test('10,000 ordinary ids give no notice', async () => {
    const selection = await fx.gateway.selections.create(agent, 'things', { filter: { id: { gte: 'user-0', lt: 'user-1' } } })
    assert.equal(selection.complete, true)
    assert.equal(selection.count, 10_000)
    const plan = await fx.gateway.plans.propose(agent, selection.selection_id, { action: { type: 'set_status', params: { status: 'user-000123 closed' } } })
    const page = await reviewer.get(`/review/plans/${plan.plan_id}`)
    assert.equal(page.status, 200)
    assert.ok(!page.html.includes('data-testid="lookalike-ids"'), 'a notice over ordinary ids')
    const selectionPage = await reviewer.get(`/review/selections/${selection.selection_id}`)
    assert.equal(selectionPage.status, 200)
    assert.ok(!selectionPage.html.includes('data-testid="lookalike-ids"'), 'a notice over ordinary ids on the selection page')
  })
})

describe('the look-alike check buckets by skeleton', () => {
  test('100,000 ids are read in one pass, in well under the time a pairwise comparison would take', async () => {
    const ids = Array.from({ length: 100_000 }, (_, i) => `acct-${String(i).padStart(7, '0')}`)
    ids.push('acct-I', 'acct-l')
    const members = async (afterOrd: number, limit: number) => ids.slice(afterOrd, afterOrd + limit).map((id, i) => ({ ord: afterOrd + i + 1, id }))
    const started = performance.now()
    const found = await lookalikeIds({ selection_id: 'sel_bucket', digest: 'sha256:x' }, members as never)
    const took = performance.now() - started
    assert.deepEqual(found.groups.map((ids) => ids.map((i) => i.id)), [['acct-I', 'acct-l']])
    assert.ok(took < 20_000, `took ${Math.round(took)} ms`)
  })
})

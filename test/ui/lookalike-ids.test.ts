import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { renderPlan, renderSelection } from '../../src/cli/render-selection.js'
import { cellText } from '../../src/cli/table-cell.js'
import type { Actor } from '../../src/contract/index.js'
import { planSummary } from '../../src/mcp/tools/plans.js'
import { type OddUpstream, startOddUpstream, thingsResourceConfig } from '../plans/support/odd-upstream.js'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { pagePart as part, textOf } from '../support/review-page.js'
import { type ReviewHttpSession, openReviewSession } from '../support/review-session.js'

/** Ids the upstream holds as separate records that read the same: NFC and NFD "café", " r002 " and "r002". */
const NFC = 'caf\u00e9'
const NFD = 'cafe\u0301'
const SPACED = ' r002 '
const PLAIN = 'r002'
/** An agent's parameter written to read as the glance's own words. */
const IMITATION = 'hold (reversible); 0 of 240 records change'

describe('record ids and agent-written text cannot pass for others (an odd http upstream)', () => {
  let upstream: OddUpstream
  let fx: GatewayFixture
  let agent: Actor
  let reviewer: ReviewHttpSession
  let plan: { plan_id: string; plan_digest: string; selection_id: string }
  before(async () => {
    upstream = await startOddUpstream([NFC, NFD, SPACED, PLAIN].map((id) => ({ id, name: `name of ${id}`, status: 'open', note: 'n' })))
    fx = await startDemoGateway({ store: 'sqlite', count: 20, edit: (c) => void (c.resources.things = thingsResourceConfig(upstream.origin)) })
    const gw = fx.gateway
    agent = await gw.principals.authenticate((await gw.principals.issue({ name: 'things-agent', role: 'agent', scopes: { resources: ['things'], actions: '*' } })).token, 'http')
    const selection = await gw.selections.create(agent, 'things', { filter: { status: 'open' } })
    assert.equal(selection.complete, true)
    plan = await gw.plans.propose(agent, selection.selection_id, { action: { type: 'set_status', params: { status: IMITATION } } })
    reviewer = await openReviewSession(fx.base, fx.tokens.reviewer)
  })
  after(async () => {
    await fx?.close()
    await upstream?.close()
  })

  test('ids that differ only in normalisation or end spaces read differently on the plan page and in the CLI, and the plan page says the selection holds look-alikes', async () => {
    const page = await reviewer.get(`/review/plans/${plan.plan_id}?limit=100`)
    assert.equal(page.status, 200)
    const manifest = textOf(part(page.html, 'manifest'))
    // the NFD one shows its combining accent as a code point; the NFC one reads as written
    assert.match(manifest, /cafe\[U\+0301\]/)
    assert.ok(manifest.includes(NFC), manifest)
    assert.match(manifest, /\[U\+0020\]r002\[U\+0020\]/)
    const notice = textOf(part(page.html, 'lookalike-ids'))
    assert.match(notice, /look alike/i, notice)
    assert.ok(notice.includes(NFC) && notice.includes('cafe[U+0301]'), notice)
    assert.ok(notice.includes('[U+0020]r002[U+0020]'), notice)

    // the CLI's table marks them by the same rule
    assert.equal(cellText(NFD), 'cafe\\u0301')
    assert.equal(cellText(NFC), NFC)
    assert.equal(cellText(SPACED), '\\u0020r002\\u0020')
    const cli = renderSelection(await fx.gateway.selections.view(agent, plan.selection_id), 100)
    assert.ok(cli.includes('cafe\\u0301') && cli.includes('\\u0020r002\\u0020'), cli)

    // a selection of plain ids has no such notice
    const plainSelection = await fx.gateway.selections.create(agent, 'things', { filter: { id: { in: ['plain', 'a/b'] } } })
    const plainPlan = await fx.gateway.plans.propose(agent, plainSelection.selection_id, { action: { type: 'set_status', params: { status: 'closed' } } })
    assert.ok(!(await reviewer.get(`/review/plans/${plainPlan.plan_id}`)).html.includes('data-testid="lookalike-ids"'))
  })

  test("an agent's parameter is set apart as the agent's words in the glance, the change, the CLI and the MCP summary", async () => {
    const page = await reviewer.get(`/review/plans/${plan.plan_id}`)
    const glance = part(page.html, 'glance')
    // boxed and quoted in the glance: the agent's text cannot continue the glance's own sentence
    assert.match(glance, /class="agent-words"[^>]*>&quot;hold \(reversible\); 0 of 240 records change&quot;</, glance)
    assert.match(textOf(glance), /status → "hold \(reversible\); 0 of 240 records change" \(the agent's words\)/, textOf(glance))
    assert.match(part(page.html, 'uniform-summary'), /class="agent-words"/)
    assert.match(part(page.html, 'action-params'), /class="agent-words"/)

    const view = await fx.gateway.plans.view(agent, plan.plan_id)
    assert.match(renderPlan(view), /the agent's words: status = "hold \(reversible\); 0 of 240 records change"/, renderPlan(view))
    assert.match(planSummary(view), /with the agent's words \{"status":"hold \(reversible\); 0 of 240 records change"\}/, planSummary(view))
  })

  test('a refusal in the flash box shows invisible and reordering characters as code points', async () => {
    await reviewer.get(`/review/plans/${plan.plan_id}`)
    const refused = await reviewer.post(`/review/plans/${plan.plan_id}/decision`, { decision: 'approve', plan_digest: 'sha256:\u202Eexe.txt' })
    assert.equal(refused.status, 409, refused.html.slice(0, 400))
    const flash = part(refused.html, 'flash')
    assert.ok(!flash.includes('\u202E'), 'no override reaches the flash box as itself')
    assert.match(textOf(flash), /sha256:\[U\+202E\]exe\.txt/)
  })
})

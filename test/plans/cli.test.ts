import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { STORE_KINDS } from '../support/stores.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** `warrant …` as a subprocess, the way an operator runs it. */
function warrant(args: readonly string[]): Promise<Run> {
  const env = { ...process.env }
  delete env.WARRANT_TOKEN
  delete env.WARRANT_CONFIG
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', join(ROOT, 'src/cli/bin.ts'), ...args], { cwd: ROOT, env, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr })
    })
  })
}

for (const kind of STORE_KINDS) {
  describe(`the CLI: select, plan, approve print what the HTTP API returns (${kind} store)`, () => {
    let fx: GatewayFixture
    let config: string
    let reviewerToken: string
    let agentToken: string
    let selection: any
    let plan: any
    before(async () => {
      fx = await startDemoGateway({ store: kind, count: 500 })
      config = join(fx.dir, 'warrant.json')
      writeFileSync(config, JSON.stringify(fx.config))
      reviewerToken = join(fx.dir, 'reviewer.token')
      writeFileSync(reviewerToken, fx.tokens.reviewer, { mode: 0o600 })
      agentToken = join(fx.dir, 'agent.token')
      writeFileSync(agentToken, fx.tokens.agent, { mode: 0o600 })
    })
    after(async () => {
      await fx?.close()
    })

    test('warrant select --json is the selection the API serves; without --json, completeness, count, digest, exclusions and groups come first', async () => {
      const args = ['select', 'subscriptions', '-c', config, '--filter', 'status=past_due', '--filter', 'region=eu', '--exclude', 'disputed:tags~disputed', '--exclude', 'legal_hold:tags~legal_hold', '--token-file', agentToken]
      const [json, human] = await Promise.all([warrant([...args, '--json']), warrant(args)])
      assert.equal(json.code, 0, json.stderr)
      selection = JSON.parse(json.stdout)
      const served = await fx.as('agent')('GET', `/v1/selections/${selection.selection_id}`)
      assert.equal(served.status, 200)
      assert.ok(selection.count < 100, 'the first page holds every member, so no cursor differs')
      // POST …/selections (which --json prints) says whether this call froze it; the selection's own view does not
      const { created, ...view } = selection
      assert.equal(created, true)
      assert.deepEqual(view, served.body)
      assert.equal(selection.complete, true)
      assert.deepEqual(selection.exclusions.map((e: any) => e.rule), ['disputed', 'legal_hold'])

      assert.equal(human.code, 0, human.stderr)
      const lines = human.stdout.split('\n')
      assert.match(lines[0]!, /^COMPLETE: selection sel_[0-9a-f]+ froze \d+ record\(s\) of subscriptions in billing-demo \(acct 4411/)
      assert.ok(lines.includes(`  count:    ${selection.count}`))
      assert.ok(lines.some((l) => /^ {2}digest: {3}sha256:[0-9a-f]{64}$/.test(l)))
      assert.ok(lines.some((l) => new RegExp(`^ {2}disputed +${selection.exclusions[0].count} `).test(l)), human.stdout)
      assert.ok(lines.some((l) => new RegExp(`^ {2}legal_hold +${selection.exclusions[1].count} `).test(l)))
      assert.ok(lines.indexOf('Groups:') > 0 && lines.indexOf('Groups:') < lines.findIndex((l) => l.startsWith('Records')))
    })

    test('an incomplete selection says so first, with its reasons; a denied field is refused (exit 2)', async () => {
      const [partial, denied] = await Promise.all([
        warrant(['select', 'subscriptions', '-c', config, '--filter', 'region=eu', '--page-size', '10', '--max-pages', '1']),
        warrant(['select', 'subscriptions', '-c', config, '--fields', 'id,card_token']),
      ])
      assert.equal(partial.code, 5, partial.stderr)
      assert.match(partial.stdout.split('\n')[0]!, /^INCOMPLETE: selection sel_\w+ froze 10 record\(s\)/)
      assert.match(partial.stdout, /NEVER committed/)
      assert.match(partial.stdout, /CLIENT_LIMIT_REACHED \(max_pages=1\)/)
      assert.equal(denied.code, 2)
      assert.match(denied.stderr, /denied_field: field "card_token" is denied/)
    })

    test('warrant plan --json is the plan the API serves', async () => {
      const run = await warrant(['plan', selection.selection_id, '-c', config, '--action', 'pause_collection', '--param', 'reason=credit hold review', '--json'])
      assert.equal(run.code, 0, run.stderr)
      const human = await warrant(['plan', selection.selection_id, '-c', config, '--action', 'pause_collection', '--param', 'reason=credit hold review'])
      const { created, ...proposed } = JSON.parse(run.stdout)
      assert.equal(created, true)
      plan = proposed
      const served = await fx.as('reviewer')('GET', `/v1/plans/${plan.plan_id}`)
      // the same plan, but for where it is reviewed: the CLI serves no review pages (no link that nobody serves), the API's server does
      const { review_url: cliUrl, review_hint: cliHint, ...cliPlan } = plan
      const { review_url: apiUrl, review_hint: apiHint, ...apiPlan } = served.body
      assert.deepEqual(cliPlan, apiPlan)
      assert.equal(cliUrl, null)
      assert.match(cliHint, /warrant serve/)
      assert.equal(apiUrl, `${fx.base}/review/plans/${plan.plan_id}`)
      assert.equal(apiHint, null)
      assert.ok(human.stdout.includes(`Review: ${cliHint}`), human.stdout)
      assert.equal(plan.action.params.reason, 'credit hold review')
      assert.equal(plan.state, 'pending')
      assert.match(human.stdout, new RegExp(`^PLAN ${plan.plan_id} \\(pending\\): pause_collection on ${plan.target_count} record`))
      assert.match(human.stdout, /already proposed/)
    })

    test('warrant approve: an agent token is refused (exit 3), --principal is refused, a reviewer token approves', async () => {
      const [byAgent, byName, wrong] = await Promise.all([
        warrant(['approve', plan.plan_id, '-c', config, '--digest', plan.plan_digest, '--token-file', agentToken]),
        warrant(['approve', plan.plan_id, '-c', config, '--digest', plan.plan_digest, '--principal', 'alice']),
        warrant(['approve', plan.plan_id, '-c', config, '--digest', 'sha256:00', '--token-file', reviewerToken]),
      ])
      assert.equal(byAgent.code, 3)
      assert.match(byAgent.stderr, /forbidden/)
      assert.notEqual(byName.code, 0)
      assert.match(byName.stderr, /--principal is not accepted/)
      assert.equal(wrong.code, 3)
      assert.match(wrong.stderr, /digest_mismatch/)

      const run = await warrant(['approve', plan.plan_id, '-c', config, '--digest', plan.plan_digest, '--comment', 'checked the manifest', '--token-file', reviewerToken, '--json'])
      assert.equal(run.code, 0, run.stderr)
      const decision = JSON.parse(run.stdout)
      const alice = await fx.gateway.principals.authenticate(fx.tokens.reviewer, 'http')
      assert.equal(decision.approved_by, alice.principal)
      assert.equal(decision.plan_state, 'approved')
      assert.equal(decision.comment, 'checked the manifest')
      const served = await fx.as('agent')('GET', `/v1/plans/${plan.plan_id}`)
      assert.equal(served.body.state, 'approved')
      assert.deepEqual(served.body.approvals.map((a: any) => a.approval_id), [decision.approval_id])

      // Every CLI invocation above left an audit row: the refusals as refusals, the approval as an approval
      const cliRows = await fx.gateway.store.db.selectFrom('audit_events').selectAll().where('surface', '=', 'cli').where('action', '=', 'cli:approve').orderBy('seq').execute()
      assert.equal(cliRows.length, 4)
      const outcomes = cliRows.map((r) => JSON.parse(r.summary) as { outcome: string; error?: string })
      assert.deepEqual(outcomes.map((o) => o.outcome).sort(), ['ok', 'refused', 'refused', 'refused'])
      assert.deepEqual(outcomes.filter((o) => o.error).map((o) => o.error).sort(), ['digest_mismatch', 'forbidden', 'unauthenticated'])
      assert.ok(cliRows.every((r) => r.plan_id === plan.plan_id))
      const approved = cliRows.find((r) => JSON.parse(r.summary).outcome === 'ok')!
      assert.equal(approved.principal, alice.principal)
      assert.equal(JSON.parse(approved.details!).decision, 'approve')
      assert.ok(!JSON.stringify(cliRows).includes(fx.tokens.reviewer), 'no token in the log')

      const commit = await fx.as('agent')('POST', `/v1/plans/${plan.plan_id}/commit`, { expected_digest: plan.plan_digest }, { 'idempotency-key': `cli-audit-${kind}` })
      assert.equal(commit.status, 202, JSON.stringify(commit.body))
      const query = await warrant(['audit', 'query', '-c', config, '--operation', commit.body.operation_id, '--json'])
      assert.equal(query.code, 0, query.stderr)
      const approvals = JSON.parse(query.stdout).who_asked.approvals as { principal: string; surface: string; decision: string }[]
      assert.deepEqual(approvals.map((a) => [a.principal, a.surface, a.decision]), [[alice.principal, 'cli', 'approve']])
    })
  })
}

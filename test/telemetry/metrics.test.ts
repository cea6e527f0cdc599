import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import { serve, type ServerType } from '@hono/node-server'
import { createMetricsApp } from '../../src/api/index.js'
import { METRICS, STORE_GAUGES } from '../../src/telemetry/index.js'
import { openDemoUpstream } from '../operations/support/demo-upstream.js'
import { selectProposeApprove, waitForOperation } from '../operations/support/flow.js'
import { call, type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'

const REASON = 'metrics check reason 7f3a'
const ARTICLE_SELECTION = {
  filter: { status: 'past_due', region: 'eu', collection: 'active' },
  exclude: [
    { rule: 'disputed', filter: { tags: { contains: 'disputed' } } },
    { rule: 'legal_hold', filter: { tags: { contains: 'legal_hold' } } },
  ],
  fields: ['id', 'customer_name', 'status', 'amount_due', 'tags', 'collection'],
}

/** One sample's value from the text format, 0 when absent. Labels are matched as given, in any order. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  let total = 0
  let found = false
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue
    const labelText = /^[^{ ]+\{(.*)\} /.exec(line)?.[1] ?? ''
    if (!Object.entries(labels).every(([k, v]) => labelText.includes(`${k}="${v}"`))) continue
    total += Number(line.slice(line.lastIndexOf(' ') + 1))
    found = true
  }
  return found ? total : 0
}

describe('/metrics (Prometheus text format)', () => {
  let fx: GatewayFixture
  before(async () => {
    // a slow pace, so scrapes land while the operation runs: real time is the point here, and at 20 writes a
    // second the operation lasts seconds, room for several scrapes even when each takes long on a busy machine
    fx = await startDemoGateway({ store: 'sqlite', count: 2000, edit: (raw) => void (raw.execution = { ...raw.execution, max_writes_per_second: 20, concurrency: 2 }) })
  })
  after(async () => {
    await fx?.close()
  })

  test('needs an admin token on the API port', async () => {
    assert.equal((await call(fx.base, 'GET', '/metrics')).status, 401)
    const agent = await fx.as('agent')('GET', '/metrics')
    assert.equal(agent.status, 403)
    assert.equal(agent.body.error.code, 'forbidden')
    assert.equal((await fx.as('reviewer')('GET', '/metrics')).status, 403)
    const admin = await fetch(`${fx.base}/metrics`, { headers: { authorization: `Bearer ${fx.tokens.admin}` } })
    assert.equal(admin.status, 200)
    assert.match(admin.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/)
    const text = await admin.text()
    for (const name of [...Object.keys(METRICS), ...Object.keys(STORE_GAUGES)]) assert.match(text, new RegExp(`^# HELP ${name} `, 'm'), name)
  })

  test("a scrape during an operation shows its progress; afterwards the whole flow is counted, and no label carries an id, a value or a token", async () => {
    const scrape = async () => {
      const response = await fetch(`${fx.base}/metrics`, { headers: { authorization: `Bearer ${fx.tokens.admin}` } })
      assert.equal(response.status, 200)
      return response.text()
    }
    const agent = fx.as('agent')
    const { selection, plan } = await selectProposeApprove(agent, [fx.as('reviewer')], 'subscriptions', ARTICLE_SELECTION, { type: 'pause_collection', reason: REASON })
    const count = selection.count as number
    assert.ok(count > 40, `a selection big enough to watch: ${count}`)
    const commit = await agent('POST', `/v1/plans/${plan.plan_id}/commit`, { expected_digest: plan.plan_digest }, { 'idempotency-key': 'metrics-progress' })
    assert.equal(commit.status, 202, JSON.stringify(commit.body))

    // scrape while it runs: the ledger's pending targets fall as succeeded ones rise
    const seen: { pending: number; succeeded: number; done: number }[] = []
    for (;;) {
      const text = await scrape()
      const point = {
        pending: sample(text, 'warrant_operation_targets', { state: 'pending' }),
        succeeded: sample(text, 'warrant_operation_targets', { state: 'succeeded' }),
        done: sample(text, 'warrant_operation_targets_total', { resource: 'subscriptions', outcome: 'succeeded' }),
      }
      seen.push(point)
      const state = (await agent('GET', `/v1/operations/${commit.body.operation_id}`)).body.state
      if (state !== 'pending' && state !== 'running') break
      await new Promise((r) => setTimeout(r, 150))
    }
    const during = seen.filter((p) => p.succeeded > 0 && p.pending > 0)
    assert.ok(during.length >= 2, `at least two scrapes mid-operation: ${JSON.stringify(seen)}`)
    for (let i = 1; i < during.length; i++) {
      assert.ok(during[i]!.succeeded >= during[i - 1]!.succeeded && during[i]!.pending <= during[i - 1]!.pending, 'progress only moves forward')
      assert.ok(during[i]!.done >= during[i - 1]!.done)
    }
    assert.ok(during.every((p) => p.succeeded + p.pending <= count))
    const operation = await waitForOperation(agent, commit.body.operation_id)
    assert.equal(operation.state, 'succeeded')

    const text = await scrape()
    assert.equal(sample(text, 'warrant_operation_targets_total', { resource: 'subscriptions', outcome: 'succeeded' }), count)
    assert.equal(sample(text, 'warrant_operation_targets', { state: 'pending' }), 0, 'a finished operation is no longer in progress')
    assert.equal(sample(text, 'warrant_operations_total', { resource: 'subscriptions', state: 'succeeded' }), 1)
    assert.equal(sample(text, 'warrant_executor_targets_in_flight'), 0)
    assert.equal(sample(text, 'warrant_walks_total', { resource: 'subscriptions', outcome: 'complete' }), 1)
    assert.ok(sample(text, 'warrant_walk_pages_total', { resource: 'subscriptions', result: 'page' }) >= 1)
    assert.ok(sample(text, 'warrant_walk_records_total', { resource: 'subscriptions' }) >= count)
    assert.equal(sample(text, 'warrant_selection_members_count', { resource: 'subscriptions' }), 1)
    assert.equal(sample(text, 'warrant_selection_members_sum', { resource: 'subscriptions' }), count)
    assert.equal(sample(text, 'warrant_approval_decisions_total', { resource: 'subscriptions', decision: 'approve' }), 1)
    assert.equal(sample(text, 'warrant_plans', { state: 'committed' }), 1)
    assert.equal(sample(text, 'warrant_upstream_calls_total', { method: 'UPDATE', status: 'none', outcome: 'written' }), count)
    assert.equal(sample(text, 'warrant_upstream_call_duration_seconds_count', { method: 'UPDATE' }), count)
    assert.ok(sample(text, 'warrant_audit_rows_total', { level: 'call' }) >= count)
    assert.ok(sample(text, 'warrant_http_requests_total', { method: 'POST', route: '/v1/plans/:id/commit', status: '202' }) === 1)
    assert.ok(sample(text, 'warrant_refusals_total', { surface: 'http', code: 'forbidden' }) >= 2, 'the refused scrapes of the first test')

    // refusals are counted by code
    const refused = await agent('POST', `/v1/resources/subscriptions/bulk-actions`, { selection_id: selection.selection_id, expected_digest: 'sha256:00', action: { type: 'pause_collection', reason: REASON } }, { 'idempotency-key': 'metrics-mismatch' })
    assert.equal(refused.body.error.code, 'digest_mismatch')
    assert.equal(sample(await scrape(), 'warrant_refusals_total', { surface: 'http', code: 'digest_mismatch' }), sample(text, 'warrant_refusals_total', { surface: 'http', code: 'digest_mismatch' }) + 1)

    // nothing in a label identifies a record, shows a value, or comes from a token
    const results = await agent('GET', `/v1/operations/${commit.body.operation_id}/results?limit=5`)
    const up = await openDemoUpstream(fx.upstreamUrl)
    const rows = await up.rows(results.body.results.map((r: any) => r.id))
    await up.close()
    const labels = text
      .split('\n')
      .filter((l) => !l.startsWith('#'))
      .map((l) => /\{(.*)\}/.exec(l)?.[1] ?? '')
      .join('\n')
    const forbidden = [
      ...results.body.results.map((r: any) => r.id),
      ...[...rows.values()].map((r) => r.id),
      REASON,
      selection.records[0].fields.customer_name,
      selection.selection_id,
      plan.plan_id,
      commit.body.operation_id,
      ...Object.values(fx.tokens),
    ]
    for (const value of forbidden) assert.ok(!text.includes(value), `no "${value}" in the metrics`)
    assert.doesNotMatch(labels, /sub_\d+|tok_[0-9a-f]{8}/)
    for (const route of new Set([...labels.matchAll(/route="([^"]*)"/g)].map((m) => m[1]!))) assert.doesNotMatch(route, /\/(?:pln|op|sel)_|sub_/, `route "${route}" is a template`)
  })

  test('server.metrics_port serves the same metrics without a token', async () => {
    const server = await new Promise<ServerType>((resolve) => {
      const s = serve({ fetch: createMetricsApp(fx.gateway).fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s))
    })
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      const response = await fetch(`${base}/metrics`)
      assert.equal(response.status, 200)
      assert.match(await response.text(), /^# HELP warrant_walks_total /m)
      assert.equal((await fetch(`${base}/v1/resources`)).status, 404, 'only /metrics on that port')
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  })
})

import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { context, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base'
import { selectProposeApprove, waitForOperation } from '../operations/support/flow.js'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'

/**
 * Warrant only calls @opentelemetry/api; here the test plays the host application and installs an SDK with
 * an in-memory exporter, then reads the tree of one commit: request → operation run → one span per target
 * write → every upstream call the target made.
 */
const exporter = new InMemorySpanExporter()
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })

const REASON = 'trace check reason 41c9'
const SELECTION = {
  filter: { status: 'past_due', region: 'eu', collection: 'active' },
  exclude: [
    { rule: 'disputed', filter: { tags: { contains: 'disputed' } } },
    { rule: 'legal_hold', filter: { tags: { contains: 'legal_hold' } } },
  ],
  fields: ['id', 'customer_name', 'status', 'amount_due', 'tags', 'collection'],
}

const idOf = (span: ReadableSpan) => span.spanContext().spanId
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId

describe('OpenTelemetry traces of one commit (MariaDB upstream)', () => {
  let fx: GatewayFixture
  before(async () => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
    trace.setGlobalTracerProvider(provider)
    fx = await startDemoGateway({ store: 'sqlite', upstream: 'mysql', count: 600 })
  })
  after(async () => {
    await fx?.close()
    await provider.shutdown()
    trace.disable()
    context.disable()
  })

  test('every upstream call of the commit sits under its request span, through the operation and its target writes', async () => {
    const agent = fx.as('agent')
    const { selection, plan } = await selectProposeApprove(agent, [fx.as('reviewer')], 'subscriptions', { ...SELECTION, page_size: 25 }, { type: 'pause_collection', reason: REASON })
    const count = selection.count as number
    assert.ok(count > 10)

    // the selection's walk: one span per page, each with its upstream SELECT under it
    const walkSpans = exporter.getFinishedSpans()
    const pages = walkSpans.filter((s) => s.name === 'warrant.walk.page')
    assert.ok(pages.length >= 2, `pages: ${pages.length}`)
    const selectionRequest = walkSpans.find((s) => s.name === 'warrant.http.request' && s.attributes['http.route'] === '/v1/resources/:resource/selections')
    assert.ok(selectionRequest, 'the selection request has its span')
    for (const page of pages) {
      assert.equal(page.spanContext().traceId, selectionRequest.spanContext().traceId)
      assert.equal(page.attributes['warrant.resource'], 'subscriptions')
      const selects = walkSpans.filter((s) => parentOf(s) === idOf(page))
      assert.deepEqual(selects.map((s) => s.name), ['warrant.upstream SELECT'], 'one upstream read per page')
    }
    exporter.reset()

    const commit = await agent('POST', `/v1/plans/${plan.plan_id}/commit`, { expected_digest: plan.plan_digest }, { 'idempotency-key': 'trace-one-commit' })
    assert.equal(commit.status, 202, JSON.stringify(commit.body))
    const operation = await waitForOperation(agent, commit.body.operation_id)
    assert.equal(operation.state, 'succeeded')
    await provider.forceFlush()

    const spans = exporter.getFinishedSpans()
    const byId = new Map(spans.map((s) => [idOf(s), s]))
    const request = spans.find((s) => s.name === 'warrant.http.request' && s.attributes['http.route'] === '/v1/plans/:id/commit')
    assert.ok(request, 'the commit request has its span')
    assert.equal(request.attributes['http.response.status_code'], 202)
    const traceId = request.spanContext().traceId
    const ancestors = (span: ReadableSpan): ReadableSpan[] => {
      const chain: ReadableSpan[] = []
      for (let parent = parentOf(span); parent !== undefined; ) {
        const next = byId.get(parent)
        if (!next) break
        chain.push(next)
        parent = parentOf(next)
      }
      return chain
    }

    const run = spans.filter((s) => s.name === 'warrant.operation.run')
    assert.equal(run.length, 1)
    assert.equal(parentOf(run[0]!), idOf(request), 'the operation runs under the commit request')
    assert.deepEqual(
      [run[0]!.attributes['warrant.operation_id'], run[0]!.attributes['warrant.plan_id'], run[0]!.attributes['warrant.selection_digest']],
      [commit.body.operation_id, plan.plan_id, selection.digest],
    )

    const targets = spans.filter((s) => s.name === 'warrant.target.write')
    assert.equal(targets.length, count, 'one span per target')
    for (const target of targets) {
      assert.equal(parentOf(target), idOf(run[0]!))
      assert.equal(target.attributes['warrant.operation_id'], commit.body.operation_id)
      assert.equal(target.attributes['warrant.plan_id'], plan.plan_id)
      assert.equal(target.attributes['warrant.selection_digest'], selection.digest)
      assert.equal(target.attributes['warrant.target.outcome'], 'succeeded')
    }

    // every upstream call made while the operation ran is in this trace, under a target of it
    const upstream = spans.filter((s) => s.name.startsWith('warrant.upstream '))
    assert.equal(upstream.filter((s) => s.name === 'warrant.upstream UPDATE').length, count, 'one UPDATE per target')
    // the records are read a window at a time (the conditional UPDATE enforces the version): one SELECT per window
    const windows = spans.filter((s) => s.name === 'warrant.window.read')
    assert.ok(windows.length >= 1 && windows.length < count, `${windows.length} window reads for ${count} targets`)
    for (const window of windows) {
      assert.equal(parentOf(window), idOf(run[0]!), 'a window read runs under the operation')
      assert.deepEqual(upstream.filter((s) => parentOf(s) === idOf(window)).map((s) => s.name), ['warrant.upstream SELECT'])
    }
    // the run reads the upstream's catalogue before its first write (refreshFacts: column types, triggers, table
    // facts, each a call of its own): those statements sit under the run itself, and nothing else does
    const ms = (t: readonly [number, number]) => t[0] * 1000 + t[1] / 1e6
    const firstWrite = Math.min(...targets.map((t) => ms(t.startTime)))
    let catalogue = 0
    for (const call of upstream) {
      assert.equal(call.spanContext().traceId, traceId)
      const chain = ancestors(call)
      if (chain[0] === run[0]) {
        catalogue += 1
        assert.equal(call.name, 'warrant.upstream SELECT', 'only the catalogue is read under the run itself')
        assert.ok(ms(call.startTime) < firstWrite, 'the catalogue is read before the first target write')
        continue
      }
      assert.ok(['warrant.target.write', 'warrant.window.read'].includes(chain[0]!.name), `${call.name} is a child of a target write or a window read`)
      assert.ok(chain.includes(run[0]!) && chain.includes(request), `${call.name} is under the operation and the commit request`)
    }
    assert.ok(catalogue <= 3, `${catalogue} statements under the run itself: the catalogue's three at most`)
    // each target's own write sits under it, not under a neighbour's span
    for (const target of targets) assert.ok(upstream.filter((s) => parentOf(s) === idOf(target) && s.name === 'warrant.upstream UPDATE').length === 1)

    // spans carry Warrant's ids and codes, never a record's id or fields
    const attributes = JSON.stringify(spans.map((s) => s.attributes))
    for (const record of selection.records as any[]) {
      assert.ok(!attributes.includes(record.id), `no record id ${record.id} in span attributes`)
      assert.ok(!attributes.includes(record.fields.customer_name))
    }
    assert.ok(!attributes.includes(REASON) && !/tok_[0-9a-f]{8}/.test(attributes))
    for (const token of Object.values(fx.tokens)) assert.ok(!attributes.includes(token))
  })
})

import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import type { Server } from 'node:http'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { after, before, describe, test } from 'node:test'
import { parse as parseYaml } from 'yaml'
import { checkResource } from '../../src/checks/index.js'
import { parseConfig } from '../../src/config/index.js'
import { decide } from '../../src/contract/index.js'
import { collectionSummary } from '../../src/mcp/summaries.js'
import { allResults, selectProposeApprove, waitForOperation } from '../operations/support/flow.js'
import { CLI_ENTRY, TSX_LOADER } from '../support/cli-config.js'
import { startGatewayOn } from '../support/gateway-fixture.js'
import { createTempDir } from '../support/stores.js'
import { startCouchLike } from '../support/upstreams/couch-like.js'
import { subscriptions, type Subscription } from '../support/upstreams/dataset.js'
import { startGithubLike } from '../support/upstreams/github-like.js'
import { startOffsetTotal } from '../support/upstreams/offset-total.js'
import { startSearchLike, type SearchLikeUpstream } from '../support/upstreams/search-like.js'
import { startStripeLike, type ExampleUpstream } from '../support/upstreams/stripe-like.js'

// Every config in examples/ runs, unchanged but for where its upstream listens, against a server of the
// style it describes: checked, searched, selected, approved, committed and audited, with no code. The
// upstream's own records are the truth every answer is compared with.
const ROOT = new URL('../..', import.meta.url).pathname
const run = promisify(execFile)
const RECORDS = subscriptions(90)
const ARTICLE = {
  filter: { status: 'past_due', region: 'eu', collection: 'active' },
  exclude: [
    { rule: 'disputed', filter: { tags: { contains: 'disputed' } } },
    { rule: 'legal_hold', filter: { tags: { contains: 'legal_hold' } } },
  ],
}
const articleTargets = RECORDS.filter((r) => r.status === 'past_due' && r.region === 'eu' && r.collection === 'active' && !r.tags.includes('disputed') && !r.tags.includes('legal_hold'))

interface Example {
  readonly file: string
  readonly start: (records: readonly Subscription[]) => Promise<ExampleUpstream>
  /** The record as the upstream holds it, for byte-for-byte comparison of everything a write must not touch. */
  readonly raw: (upstream: ExampleUpstream, id: string) => Record<string, unknown>
  /**
   * What a complete walk through the gateway can vouch for (README, `scope.stability`): keyset from the id and
   * offset pages with a total prove themselves; a keyset with `skip_param` and Link headers cannot.
   */
  readonly stability: 'proven' | 'unproven'
}

const plain = (u: ExampleUpstream, id: string) => structuredClone(u.records.get(id)) as unknown as Record<string, unknown>
const EXAMPLES: readonly Example[] = [
  { file: 'stripe-style.yaml', start: startStripeLike, raw: plain, stability: 'proven' },
  { file: 'github-style.yaml', start: startGithubLike, raw: plain, stability: 'unproven' },
  { file: 'offset-total.yaml', start: startOffsetTotal, raw: plain, stability: 'proven' },
  { file: 'couch-style.yaml', start: startCouchLike, raw: plain, stability: 'unproven' },
  { file: 'search-style.yaml', start: startSearchLike, raw: plain, stability: 'proven' },
]

/** Everything but the fields an approved write may change (and the bookkeeping the upstream itself keeps). */
function untouched(record: Record<string, unknown>): Record<string, unknown> {
  const { collection: _c, version: _v, _rev: _r, ...rest } = record
  return rest
}

for (const example of EXAMPLES)
  describe(`examples/${example.file} against a server of its style`, () => {
    let upstream: ExampleUpstream
    let dir: Awaited<ReturnType<typeof createTempDir>>
    let fx: Awaited<ReturnType<typeof startGatewayOn>>
    before(async () => {
      upstream = await example.start(RECORDS)
      dir = await createTempDir('warrant-example-')
      const raw = parseYaml(readFileSync(join(ROOT, 'examples', example.file), 'utf8')) as Record<string, any>
      raw.store = `sqlite:${join(dir.path, 'warrant.db')}`
      raw.resources.subscriptions.connector.sources[0].base_url = upstream.origin
      fx = await startGatewayOn(parseConfig(raw, example.file), { resources: ['subscriptions'], env: { ...process.env, BILLING_API_KEY: 'sk_test_example' } })
    })
    after(async () => {
      await fx?.close()
      await upstream?.close()
      await dir?.drop()
    })

    test('warrant check: every guarantee holds', async () => {
      const resource = fx.gateway.catalogue.get('subscriptions')
      const report = await checkResource({ name: 'subscriptions', config: resource.config, connector: resource.connector, pages: 20, pageSize: 10 })
      assert.equal(report.verdict, 'holds', JSON.stringify(report.guarantees.filter((g) => g.status !== 'holds'), null, 2))
    })

    test('warrant check --write-probe: the upstream refuses a stale version, and the record is untouched', async () => {
      const resource = fx.gateway.catalogue.get('subscriptions')
      const id = RECORDS[3]!.id
      const was = example.raw(upstream, id)
      const report = await checkResource({ name: 'subscriptions', config: resource.config, connector: resource.connector, pages: 1, pageSize: 10, writeProbeId: id })
      const probe = report.guarantees.find((g) => g.name === 'write_probe.pause_collection')
      assert.equal(probe?.status, 'holds', JSON.stringify(probe))
      assert.deepEqual(example.raw(upstream, id), was)
      assert.equal(upstream.writes.get(id), undefined)
    })

    test('a filtered search is complete and finds exactly what the upstream holds', async () => {
      const res = await fx.as('agent')('POST', '/v1/resources/subscriptions/search', { filter: { status: 'past_due' }, page_size: 7 })
      assert.equal(res.status, 200, JSON.stringify(res.body))
      assert.equal(res.body.complete, true, JSON.stringify(res.body.incomplete_reasons))
      const truth = RECORDS.filter((r) => r.status === 'past_due').map((r) => r.id)
      assert.deepEqual(res.body.items.map((i: { id: string }) => i.id).sort(), truth.sort())
      // through the gateway (its connectors wrapped for telemetry) the walk keeps what its positions prove
      assert.equal(res.body.scope.stability, example.stability)
      assert.equal(decide(res.body, 'prove_absence').decision, example.stability === 'proven' ? 'proceed' : 'refuse_or_request_review')
    })

    test("the article's change: select with exclusions, approve, commit; each target written once, nothing else changed, audited", async () => {
      const before = new Map(articleTargets.map((r) => [r.id, example.raw(upstream, r.id)]))
      const others = RECORDS.filter((r) => !before.has(r.id)).map((r) => [r.id, example.raw(upstream, r.id)] as const)
      const { selection, plan } = await selectProposeApprove(fx.as('agent'), [fx.as('reviewer'), fx.as('reviewer2')], 'subscriptions', ARTICLE, { type: 'pause_collection' })
      assert.equal(selection.count, articleTargets.length)
      const commit = await fx.as('agent')('POST', `/v1/plans/${plan.plan_id}/commit`, { expected_digest: plan.plan_digest }, { 'idempotency-key': `example-${example.file}` })
      assert.equal(commit.status, 202, JSON.stringify(commit.body))
      const operation = await waitForOperation(fx.as('agent'), commit.body.operation_id)
      const results = await allResults(fx.as('agent'), operation.operation_id)
      assert.deepEqual(
        results.filter((r) => r.outcome !== 'succeeded').map((r) => `${r.target_id ?? r.id}: ${r.outcome} ${r.error ?? ''}`),
        [],
      )
      assert.equal(results.length, articleTargets.length)
      for (const [id, was] of before) {
        const now = example.raw(upstream, id)
        assert.equal(now.collection, 'paused', id)
        assert.deepEqual(untouched(now), untouched(was), `${id}: only the approved field changed`)
        assert.equal(upstream.writes.get(id), 1, `${id} written exactly once`)
      }
      for (const [id, was] of others) assert.deepEqual(example.raw(upstream, id), was, `${id} was not a target and did not change`)
      const audit = await fx.as('reviewer')('GET', `/v1/audit?operation_id=${operation.operation_id}`)
      assert.equal(audit.status, 200, JSON.stringify(audit.body))
      const text = JSON.stringify(audit.body)
      for (const id of before.keys()) assert.ok(text.includes(id), `the audit names the upstream call for ${id}`)
    })
  })

interface ExpressApp {
  use(...handlers: unknown[]): void
  listen(port: number, host: string, callback: () => void): Server
}
const jsonServer = createRequire(import.meta.url)('json-server') as {
  create(): ExpressApp
  router(db: Record<string, unknown>): unknown
  defaults(options: { logger: boolean }): unknown[]
}

describe('examples/json-server.yaml against json-server 0.17 (the real package) and its db.json', () => {
  const db = JSON.parse(readFileSync(join(ROOT, 'examples/json-server/db.json'), 'utf8')) as { subscriptions: { id: string; status: string; region: string }[] }
  let server: Server
  let dir: Awaited<ReturnType<typeof createTempDir>>
  let configPath: string
  let fx: Awaited<ReturnType<typeof startGatewayOn>>
  before(async () => {
    const app = jsonServer.create()
    app.use(jsonServer.defaults({ logger: false }))
    app.use(jsonServer.router(structuredClone(db)))
    server = await new Promise<Server>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s))
    })
    dir = await createTempDir('warrant-example-')
    const raw = parseYaml(readFileSync(join(ROOT, 'examples/json-server.yaml'), 'utf8')) as Record<string, any>
    raw.store = `sqlite:${join(dir.path, 'warrant.db')}`
    raw.resources.subscriptions.connector.sources[0].base_url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    configPath = join(dir.path, 'warrant.json')
    writeFileSync(configPath, JSON.stringify(raw))
    fx = await startGatewayOn(parseConfig(raw, 'json-server.yaml'), { resources: ['subscriptions'] })
  })
  after(async () => {
    await fx?.close()
    await new Promise<void>((resolve) => {
      server?.closeAllConnections()
      server?.close(() => resolve())
    })
    await dir?.drop()
  })

  test('warrant check (a real subprocess) prints the table and exits 0', async () => {
    const out = await run(process.execPath, ['--import', TSX_LOADER, CLI_ENTRY, 'check', 'subscriptions', '--config', configPath, '--page-size', '7', '--pages', '10'], {
      cwd: dir.path,
      env: { ...process.env, WARRANT_LOG_LEVEL: 'silent' },
    }).catch((e: { code: number; stdout: string; stderr: string }) => e)
    assert.equal('code' in out ? out.code : 0, 0, `${out.stdout}${out.stderr}`)
    assert.match(out.stdout, /^check subscriptions \(http\): every guarantee holds/)
    assert.match(out.stdout, /^totals\s+holds\s+the total matched a whole walk/m)
  })

  test('warrant check --write-probe with an action added: json-server accepts a stale If-Match, so UNSAFE (exit 6), and nothing changed', async () => {
    const raw = JSON.parse(readFileSync(configPath, 'utf8')) as Record<string, any>
    raw.resources.subscriptions.actions = {
      pause_collection: { set: { collection: 'paused' }, precondition: { status: 'past_due' }, write: { style: 'patch', path: '/subscriptions/{id}', body: { collection: '{{set.collection}}' } } },
    }
    const withAction = join(dir.path, 'with-action.json')
    writeFileSync(withAction, JSON.stringify(raw))
    const id = db.subscriptions[1]!.id
    const before = await (await fetch(`${raw.resources.subscriptions.connector.sources[0].base_url}/subscriptions/${id}`)).json()
    const out = await run(process.execPath, ['--import', TSX_LOADER, CLI_ENTRY, 'check', 'subscriptions', '--config', withAction, '--write-probe', id], {
      cwd: dir.path,
      env: { ...process.env, WARRANT_LOG_LEVEL: 'silent' },
    }).then(
      (ok) => ({ code: 0, ...ok }),
      (e: { code: number; stdout: string; stderr: string }) => e,
    )
    assert.equal(out.code, 6, out.stdout + out.stderr)
    assert.match(out.stdout, /^write_probe\.pause_collection\s+UNSAFE\s+the upstream ACCEPTED a write with a stale version/m)
    assert.match(out.stdout, /\[fix: actions\.pause_collection\.write\.version\]/)
    const after = await (await fetch(`${raw.resources.subscriptions.connector.sources[0].base_url}/subscriptions/${id}`)).json()
    assert.deepEqual(after, before, 'the probe wrote the values already there')
  })

  test('a search filtered upstream and re-checked here is complete and exact; a selection over it is complete', async () => {
    const res = await fx.as('agent')('POST', '/v1/resources/subscriptions/search', { filter: { status: 'past_due', region: 'eu' }, page_size: 3 })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.equal(res.body.complete, true, JSON.stringify(res.body.incomplete_reasons))
    const truth = db.subscriptions.filter((r) => r.status === 'past_due' && r.region === 'eu').map((r) => r.id)
    assert.ok(truth.length > 0)
    assert.deepEqual(res.body.items.map((i: { id: string }) => i.id), truth)
    const selection = await fx.as('agent')('POST', '/v1/resources/subscriptions/selections', { filter: { status: 'past_due' } })
    assert.equal(selection.status, 201, JSON.stringify(selection.body))
    assert.equal(selection.body.complete, true)
    assert.equal(selection.body.count, db.subscriptions.filter((r) => r.status === 'past_due').length)
  })
})

describe('examples/search-style.yaml when the search engine answers only in part', () => {
  let upstream: SearchLikeUpstream
  let dir: Awaited<ReturnType<typeof createTempDir>>
  let fx: Awaited<ReturnType<typeof startGatewayOn>>
  before(async () => {
    upstream = await startSearchLike(RECORDS)
    dir = await createTempDir('warrant-example-')
    const raw = parseYaml(readFileSync(join(ROOT, 'examples/search-style.yaml'), 'utf8')) as Record<string, any>
    raw.store = `sqlite:${join(dir.path, 'warrant.db')}`
    raw.resources.subscriptions.connector.sources[0].base_url = upstream.origin
    fx = await startGatewayOn(parseConfig(raw, 'search-style.yaml'), { resources: ['subscriptions'] })
  })
  after(async () => {
    await fx?.close()
    await upstream?.close()
    await dir?.drop()
  })
  const search = () => fx.as('agent')('POST', '/v1/resources/subscriptions/search', { filter: { status: 'past_due' }, page_size: 10 })

  test('a failed shard: the hits of the others come back, never as a complete answer (SOURCE_UNAVAILABLE names the parts)', async () => {
    upstream.failShards = 1
    upstream.timeOut = false
    const res = await search()
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.equal(res.body.complete, false)
    const reason = res.body.incomplete_reasons.find((r: { code: string }) => r.code === 'SOURCE_UNAVAILABLE')
    assert.ok(reason, JSON.stringify(res.body.incomplete_reasons))
    assert.match(reason.message, /1 of 2 of its parts \(_shards\.failed\) failed/)
    assert.ok(res.body.items.length > 0 && res.body.items.length < RECORDS.filter((r) => r.status === 'past_due').length)
    const selection = await fx.as('agent')('POST', '/v1/resources/subscriptions/selections', { filter: { status: 'past_due' } })
    assert.equal(selection.status, 201, JSON.stringify(selection.body))
    assert.equal(selection.body.complete, false, 'a selection over a partial answer is never committable')
  })

  test('timed_out: TIME_BUDGET_EXCEEDED, not complete', async () => {
    upstream.failShards = 0
    upstream.timeOut = true
    const res = await search()
    assert.equal(res.body.complete, false)
    assert.ok(res.body.incomplete_reasons.some((r: { code: string }) => r.code === 'TIME_BUDGET_EXCEEDED'), JSON.stringify(res.body.incomplete_reasons))
  })

  // timed_out is the engine's own timeout, not the walk's deadline_ms a caller set: the reason and the continuation say
  // whose limit it was and that a longer deadline does not help (was: "the upstream cut "search" short by its own
  // limit; narrow the filter so each query stays under it", a count limit's advice)
  test('timed_out under a caller deadline: the reason and the continuation name the upstream time limit, not the walk deadline', async () => {
    upstream.failShards = 0
    upstream.timeOut = true
    const res = await fx.as('agent')('POST', '/v1/resources/subscriptions/search', { filter: { status: 'past_due' }, page_size: 10, budget: { deadline_ms: 60_000 } })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    const reason = res.body.incomplete_reasons.find((r: { code: string }) => r.code === 'TIME_BUDGET_EXCEEDED')
    assert.match(reason?.message ?? '', /not this walk's deadline_ms/, JSON.stringify(res.body.incomplete_reasons))
    const c = res.body.continuation
    assert.equal(c.kind, 'narrow_query')
    assert.doesNotMatch(c.message, /stays under it/, 'a time limit is no count a narrower filter stays under')
    assert.match(c.message, /time limit .*a longer deadline_ms does not help/)
    assert.match(collectionSummary(res.body, res.body.items.length, 'subscriptions'), /a longer deadline_ms does not help/)
  })
})

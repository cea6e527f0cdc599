import assert from 'node:assert/strict'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, beforeEach, describe, test } from 'node:test'
import { checkResource, type CheckReport } from '../../src/checks/index.js'
import { parseConfig } from '../../src/config/index.js'
import type { UpstreamCall } from '../../src/connectors/index.js'
import { createCatalogue, type Catalogue } from '../../src/resources/index.js'
import { sendJson, startUpstream, type TestUpstream } from '../connectors/http/upstream-server.js'
import { createCliWorkspace, runWarrant } from '../support/cli-config.js'

const GOOD = 'the-one-token-it-issued'

/** An http resource on `origin`, paged by offset, whose Bearer credential is the environment variable `env`. */
function credentialedResource(origin: string, env: string): Record<string, unknown> {
  return {
    environment: { name: 'crm-prod' },
    connector: {
      kind: 'http',
      timeout_ms: 2000,
      sources: [{ name: 'main', base_url: origin }],
      credential: { scheme: 'Bearer', secret: { env } },
      list: { path: '/items', page_size_param: 'limit', pagination: { style: 'offset' } },
      get: { path: '/items/{id}' },
      version: { from: 'field', field: 'version' },
    },
    fields: { id: 'string', status: 'string', version: 'integer' },
    review_fields: ['id', 'status'],
  }
}

/** How the upstream answers a credential it never issued. */
type Stranger = 'refuses' | 'empty' | 'public_subset' | 'ignores' | 'error_body' | 'teapot'

const items = Array.from({ length: 12 }, (_, i) => ({ id: `r${String(i).padStart(3, '0')}`, status: i % 3 === 0 ? 'public' : 'private', version: 1 }))

// Upstreams shaped unlike the demo, each answering an unknown credential its own way: the probe must say unsafe
// exactly where that answer would make a walk read "nothing" (or a subset) and call it complete.
describe('credential_refused: the first page asked again with a credential the upstream never issued', () => {
  let stranger: Stranger = 'refuses'
  let upstream: TestUpstream
  let catalogue: Catalogue
  const calls: UpstreamCall[] = []
  before(async () => {
    upstream = await startUpstream((req, res) => {
      const known = req.headers.authorization === `Bearer ${GOOD}`
      let view = items
      if (!known) {
        if (stranger === 'refuses') return sendJson(res, 401, { error: 'unknown token' })
        if (stranger === 'teapot') return sendJson(res, 503, { error: 'down' })
        if (stranger === 'error_body') return sendJson(res, 200, { error: 'invalid token' })
        if (stranger === 'empty') view = []
        if (stranger === 'public_subset') view = items.filter((i) => i.status === 'public')
      }
      const from = Number(req.url.searchParams.get('offset') ?? 0)
      const size = Number(req.url.searchParams.get('limit') ?? 10)
      sendJson(res, 200, { items: view.slice(from, from + size) })
    })
    const config = parseConfig({
      store: 'sqlite::memory:',
      resources: {
        items: credentialedResource(upstream.origin, 'ITEMS_TOKEN'),
        rows: {
          environment: { name: 'db' },
          connector: { kind: 'sql', url: `sqlite:${join(tmpdir(), 'warrant-never-opened.db')}`, table: 'rows' },
          fields: { id: 'string', version: 'integer' },
          id_field: 'id',
          version_field: 'version',
          review_fields: ['id'],
        },
      },
    })
    catalogue = createCatalogue({ config, env: { ITEMS_TOKEN: GOOD }, onCall: (call) => calls.push(call) })
  })
  after(async () => {
    await catalogue?.close()
    await upstream?.close()
  })
  beforeEach(() => {
    calls.length = 0
  })

  const check = async (): Promise<CheckReport> => {
    const resource = catalogue.get('items')
    return checkResource({ name: 'items', config: resource.config, connector: resource.connector, stranger: resource.stranger?.() ?? null, pages: 2, pageSize: 5 })
  }
  const guarantee = (report: CheckReport) => report.guarantees.find((g) => g.name === 'credential_refused')!

  const cases: readonly [Stranger, string, RegExp][] = [
    ['refuses', 'holds', /refused the unknown credential \(401\)/],
    ['error_body', 'holds', /refused the unknown credential/],
    ['empty', 'unsafe', /200 and no records where the configured one reads 5: the day that credential expires or is revoked, every walk reads nothing and is called complete/],
    ['public_subset', 'unsafe', /other records \(4 against 5, a public subset\?\)/],
    ['ignores', 'warning', /same 5 records as the configured one: the upstream does not check this credential/],
    ['teapot', 'unknown', /was not answered \(unavailable/],
  ]
  const WHAT: Record<Stranger, string> = {
    refuses: 'with 401',
    error_body: 'with 200 and an error object',
    empty: 'with 200 and no records',
    public_subset: 'with 200 and its public records',
    ignores: 'as the configured one',
    teapot: 'with 503',
  }
  for (const [answer, status, detail] of cases)
    test(`an upstream that answers an unknown credential ${WHAT[answer]}: ${status}`, async () => {
      stranger = answer
      const report = await check()
      const g = guarantee(report)
      assert.equal(g.status, status, g.detail)
      assert.match(g.detail, detail)
      assert.deepEqual(g.config_keys, status === 'unsafe' || status === 'warning' ? ['connector.credential'] : [])
      if (status === 'unsafe') assert.equal(report.verdict, 'unsafe', 'the verdict is never better than the worst guarantee')
      // the stranger's calls are reported like the connector's (the gateway audits them): only it is answered 401
      if (answer === 'refuses') assert.equal(calls.filter((c) => c.status === 401).length, 1, 'one unknown-credential read, reported')
    })

  test('the stranger never carries the configured secret, and is one connector per resource, closed with the catalogue', async () => {
    const seen: string[] = []
    const spy = await startUpstream((req, res) => {
      seen.push(String(req.headers.authorization))
      sendJson(res, 401, {})
    })
    try {
      const config = parseConfig({
        store: 'sqlite::memory:',
        resources: { items: { ...catalogue.get('items').config, connector: { ...catalogue.get('items').config.connector, sources: [{ name: 'main', base_url: spy.origin }] } } },
      })
      const own = createCatalogue({ config, env: { ITEMS_TOKEN: GOOD } })
      const s = own.get('items').stranger!()!
      assert.equal(own.get('items').stranger!(), s, 'built once')
      const session = await s.openSession()
      const page = await session.readPage({ source: 'main', filter: {}, position: null, pageSize: 5 })
      await session.close()
      assert.equal(page.kind, 'forbidden')
      assert.equal(seen.length, 1)
      assert.match(seen[0]!, /^Bearer \S{20,}$/, 'the configured scheme, with a secret of its own')
      assert.ok(!seen[0]!.includes(GOOD), 'never the configured secret')
      await own.close()
    } finally {
      await spy.close()
    }
  })

  test('not applicable where the question means nothing: a sql upstream, an http resource without a credential', async () => {
    assert.equal(catalogue.get('rows').stranger!(), null)
    const report = await checkResource({ name: 'rows', config: catalogue.get('rows').config, connector: catalogue.get('items').connector, stranger: null, pages: 1, pageSize: 5 })
    assert.match(guarantee(report).detail, /a SQLite file has no credential/)
    assert.equal(guarantee(report).status, 'not_applicable')
  })
})

describe('warrant check on an upstream that answers an unknown credential with an empty list', () => {
  test('exits 6 (unsafe), names credential_refused and connector.credential; the probe\'s calls are in the audit log', async () => {
    let requests = 0
    const upstream = await startUpstream((req, res) => {
      requests += 1
      const known = req.headers.authorization === `Bearer ${GOOD}`
      const from = Number(req.url.searchParams.get('offset') ?? 0)
      const size = Number(req.url.searchParams.get('limit') ?? 10)
      sendJson(res, 200, { items: known ? items.slice(from, from + size) : [] })
    })
    const ws = await createCliWorkspace({
      count: 10,
      edit: (raw) => {
        raw.resources.crm = credentialedResource(upstream.origin, 'CRM_TOKEN')
      },
    })
    try {
      const run = await runWarrant(['check', 'crm', '--config', ws.configPath, '--json'], ws.dir, { CRM_TOKEN: GOOD })
      assert.equal(run.code, 6, `${run.stdout}\n${run.stderr}`)
      const report = JSON.parse(run.stdout) as CheckReport
      const g = report.guarantees.find((x) => x.name === 'credential_refused')!
      assert.equal(g.status, 'unsafe', g.detail)
      assert.deepEqual(g.config_keys, ['connector.credential'])
      assert.ok(!run.stdout.includes(GOOD) && !run.stderr.includes(GOOD), 'the secret is never printed')
      // every upstream call is in the audit log, the stranger's included: as many call rows as requests it received
      const audited = await ws.withStore((store) => store.db.selectFrom('audit_events').select('seq').where('level', '=', 'call').execute())
      assert.ok(requests >= 3, `the upstream was asked: ${requests}`)
      assert.equal(audited.length, requests)
    } finally {
      await ws.drop()
      await upstream.close()
    }
  })
})

import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import BetterSqlite3 from 'better-sqlite3'
import { createListDigest } from '../../src/contract/index.js'
import { excludedPageSchema, memberPageSchema, selectionViewSchema } from '../../src/selections/index.js'
import { call, type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { STORE_KINDS } from '../support/stores.js'

/** Rows of the demo upstream, read directly with SQL: the ground truth a selection is compared with. */
function upstream<T>(fx: GatewayFixture, query: string): T[] {
  const db = new BetterSqlite3(fx.upstreamUrl.slice('sqlite:'.length), { readonly: true })
  try {
    return db.prepare(query).all() as T[]
  } finally {
    db.close()
  }
}
const hasTag = (tag: string) => `exists (select 1 from json_each(tags) where value = '${tag}')`
const BASE = "status = 'past_due' and region = 'eu'"

/** The article's request: past_due subscriptions in the eu, except disputed and legal_hold ones. */
export const ARTICLE_REQUEST = {
  filter: { status: 'past_due', region: 'eu' },
  exclude: [
    { rule: 'disputed', filter: { tags: { contains: 'disputed' } } },
    { rule: 'legal_hold', filter: { tags: { contains: 'legal_hold' } } },
  ],
  fields: ['id', 'customer_name', 'status', 'amount_due', 'tags'],
}

async function allPages(fx: GatewayFixture, path: string, limit: number): Promise<any[]> {
  const out: any[] = []
  let cursor: string | null = null
  for (let i = 0; i < 10_000; i++) {
    const res = await fx.as('agent')('GET', `${path}${path.includes('?') ? '&' : '?'}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)
    assert.equal(res.status, 200, JSON.stringify(res.body))
    out.push(...res.body.records)
    cursor = res.body.next_cursor
    if (!cursor) return out
  }
  throw new Error('paging did not end')
}

for (const kind of STORE_KINDS) {
  describe(`selections over HTTP (${kind} store)`, () => {
    let fx: GatewayFixture
    let article: any
    before(async () => {
      fx = await startDemoGateway({ store: kind, count: 3000 })
      const res = await fx.as('agent')('POST', '/v1/resources/subscriptions/selections', ARTICLE_REQUEST)
      assert.equal(res.status, 201, JSON.stringify(res.body))
      article = res.body
    })
    after(async () => {
      await fx?.close()
    })

    test("the article's selection: members, both exclusions with counts, groups, environment and selector", async () => {
      selectionViewSchema.parse(article)
      assert.match(article.selection_id, /^sel_[0-9a-f]{24}$/)
      assert.equal(article.resource, 'subscriptions')
      assert.equal(article.environment, 'billing-demo (acct 4411, host demo.sqlite (local))')
      assert.deepEqual(article.selector, { filter: ARTICLE_REQUEST.filter, exclude: ARTICLE_REQUEST.exclude })
      assert.equal(article.complete, true)
      assert.equal(article.status, 'complete')
      assert.deepEqual(article.incomplete_reasons, [])
      assert.equal(article.consistent_snapshot, true)
      assert.equal(article.scope.consistent_snapshot, true)
      assert.equal(article.committable, true)
      assert.equal(article.recovery, null)
      assert.match(article.digest, /^sha256:[0-9a-f]{64}$/)
      assert.ok(Date.parse(article.expires_at) - Date.parse(article.created_at) === 30 * 60_000, 'default expiry: 30 minutes')

      const members = upstream<{ id: string; version: number }>(fx, `select id, version from subscriptions where ${BASE} and not ${hasTag('disputed')} and not ${hasTag('legal_hold')} order by id`)
      assert.equal(article.count, members.length)
      const disputed = upstream<{ id: string }>(fx, `select id from subscriptions where ${BASE} and ${hasTag('disputed')} order by id`)
      // a record matching both rules is counted once, under the first rule it matches
      const legal = upstream<{ id: string }>(fx, `select id from subscriptions where ${BASE} and ${hasTag('legal_hold')} and not ${hasTag('disputed')} order by id`)
      assert.ok(disputed.length > 0 && legal.length > 0)
      assert.deepEqual(
        article.exclusions.map((e: any) => ({ rule: e.rule, count: e.count })),
        [
          { rule: 'disputed', count: disputed.length },
          { rule: 'legal_hold', count: legal.length },
        ],
      )
      assert.match(article.exclusion_rule, /first rule/)
      assert.equal(article.exclusions[0].records_url, `/v1/selections/${article.selection_id}/excluded?rule=disputed`)

      // the excluded records are listed, rule by rule
      const disputedListed = await allPages(fx, article.exclusions[0].records_url, 7)
      assert.deepEqual(disputedListed.map((r) => r.id), disputed.map((r) => r.id))
      const legalListed = await allPages(fx, article.exclusions[1].records_url, 100)
      assert.deepEqual(legalListed.map((r) => r.id), legal.map((r) => r.id))
      const both = upstream<{ id: string }>(fx, `select id from subscriptions where ${BASE} and ${hasTag('disputed')} and ${hasTag('legal_hold')}`)
      for (const { id } of both) {
        assert.ok(disputedListed.some((r) => r.id === id))
        assert.ok(!legalListed.some((r) => r.id === id))
      }
      const page = await fx.as('agent')('GET', `${article.exclusions[0].records_url}&limit=5`)
      excludedPageSchema.parse(page.body)
      assert.ok(page.body.records.every((r: any) => r.fields.tags.includes('disputed')))

      // groups, per declared group-by field, equal SQL's
      const tenants = upstream<{ tenant: string; n: number }>(
        fx,
        `select tenant, count(*) as n from subscriptions where ${BASE} and not ${hasTag('disputed')} and not ${hasTag('legal_hold')} group by tenant order by n desc, tenant`,
      )
      const tenantGroup = article.groups.find((g: any) => g.field === 'tenant')
      assert.deepEqual(
        Object.fromEntries(tenantGroup.values.map((v: any) => [v.value, v.count])),
        Object.fromEntries(tenants.map((t) => [t.tenant, t.n])),
      )
      assert.equal(tenantGroup.complete, true)
      assert.deepEqual(article.groups.map((g: any) => g.field), ['status', 'tenant', 'region', 'owner'])
      assert.deepEqual(article.groups.find((g: any) => g.field === 'status').values, [{ value: 'past_due', count: members.length }])

      // the first page: review fields only, in id order, with versions
      assert.equal(article.records.length, Math.min(100, members.length))
      assert.deepEqual(article.records.slice(0, 3).map((r: any) => [r.ord, r.id, r.version]), members.slice(0, 3).map((m, i) => [i + 1, m.id, String(m.version)]))
      assert.deepEqual(Object.keys(article.records[0].fields), ARTICLE_REQUEST.fields)
      assert.ok(!JSON.stringify(article).includes('card_token') && !JSON.stringify(article).includes('tok_'))
    })

    test('paging by cursor returns exactly count members in order, and the digest recomputed from the pages equals digest', async () => {
      const pages = await allPages(fx, `/v1/selections/${article.selection_id}/records`, 37)
      assert.equal(pages.length, article.count)
      assert.deepEqual(pages.map((r) => r.ord), Array.from({ length: article.count }, (_, i) => i + 1))
      const ids = pages.map((r) => r.id)
      assert.deepEqual(ids, [...ids].sort())
      const digest = createListDigest()
      for (const r of pages) digest.add({ id: r.id, version: r.version })
      assert.equal(digest.finish(), article.digest)
      const members = upstream<{ id: string }>(fx, `select id from subscriptions where ${BASE} and not ${hasTag('disputed')} and not ${hasTag('legal_hold')} order by id`)
      assert.deepEqual(ids, members.map((m) => m.id))

      const one = await fx.as('agent')('GET', `/v1/selections/${article.selection_id}/records?limit=10`)
      memberPageSchema.parse(one.body)
      assert.equal(one.body.digest, article.digest)
      const again = await fx.as('agent')('GET', `/v1/selections/${article.selection_id}`)
      assert.equal(again.status, 200)
      assert.equal(again.body.digest, article.digest)
      assert.equal(again.body.count, article.count)
    })

    test('a cursor of another selection, or an altered one, is invalid_cursor', async () => {
      const other = await fx.as('agent')('POST', '/v1/resources/subscriptions/selections', { filter: { region: 'us' } })
      assert.equal(other.status, 201)
      const cursor = other.body.next_cursor
      assert.ok(cursor)
      const foreign = await fx.as('agent')('GET', `/v1/selections/${article.selection_id}/records?cursor=${encodeURIComponent(cursor)}`)
      assert.equal(foreign.status, 400)
      assert.equal(foreign.body.error.code, 'invalid_cursor')
      const altered = cursor.slice(0, -2) + (cursor.endsWith('AA') ? 'BB' : 'AA')
      const bad = await fx.as('agent')('GET', `/v1/selections/${other.body.selection_id}/records?cursor=${encodeURIComponent(altered)}`)
      assert.equal(bad.status, 400)
      assert.equal(bad.body.error.code, 'invalid_cursor')
    })

    test('export: CSV with a header of review fields and one row per member; NDJSON one line per member', async () => {
      const csv = await fetch(`${fx.base}/v1/selections/${article.selection_id}/export?format=csv`, { headers: { authorization: `Bearer ${fx.tokens.reviewer}` } })
      assert.equal(csv.status, 200)
      assert.match(csv.headers.get('content-type') ?? '', /^text\/csv/)
      assert.equal(csv.headers.get('content-disposition'), `attachment; filename="${article.selection_id}.csv"`)
      assert.equal(csv.headers.get('x-warrant-selection-digest'), article.digest)
      const text = await csv.text()
      const lines = text.split('\r\n')
      assert.equal(lines.pop(), '', 'the file ends with a line break')
      assert.equal(lines[0], 'selection_complete,selection_state,id,customer_name,status,amount_due,tags,frozen_version,selection_incomplete_reasons,selection_excluded,selection_withheld_fields,selection_environment,selection_upstream_moved,selection_expires_at,selection_count,selection_digest')
      assert.equal(lines.length - 1, article.count)
      assert.ok(lines[1]!.startsWith(`true,frozen,${article.records[0].id},`))
      assert.ok(text.includes('"[""enterprise""]"') || !article.records.some((r: any) => r.fields.tags.length), 'lists are JSON, quoted')

      const nd = await fetch(`${fx.base}/v1/selections/${article.selection_id}/export?format=ndjson`, { headers: { authorization: `Bearer ${fx.tokens.agent}` } })
      assert.equal(nd.status, 200)
      const rows = (await nd.text()).trim().split('\n').map((l) => JSON.parse(l))
      // the first line says what the file is, the last that it ended
      assert.equal(rows.shift().format, 'warrant-selection-export/1')
      assert.equal(rows.pop().end, true)
      assert.equal(rows.length, article.count)
      const digest = createListDigest()
      for (const r of rows) digest.add({ id: r.id, version: r.version })
      assert.equal(digest.finish(), article.digest)

      const wrong = await fx.as('agent')('GET', `/v1/selections/${article.selection_id}/export?format=xlsx`)
      assert.equal(wrong.status, 400)
    })

    const denied: [string, unknown, string][] = [
      ['a denied field requested', { filter: { region: 'eu' }, fields: ['id', 'card_token'] }, 'card_token'],
      ['a filter on a denied field', { filter: { notes: 'x' } }, 'notes'],
      ['a denied field in an exclusion rule', { filter: { region: 'eu' }, exclude: [{ rule: 'secret', filter: { card_token: { is_null: false } } }] }, 'card_token'],
    ]
    for (const [name, body, field] of denied)
      test(`${name} → 400 denied_field naming it`, async () => {
        const res = await fx.as('agent')('POST', '/v1/resources/subscriptions/selections', body)
        assert.equal(res.status, 400, JSON.stringify(res.body))
        assert.equal(res.body.error.code, 'denied_field')
        assert.match(res.body.error.message, new RegExp(field))
        assert.equal(res.body.error.details.field, field)
      })

    test('only review fields may be requested; bad rules and filters are 400', async () => {
      const notReview = await fx.as('agent')('POST', '/v1/resources/subscriptions/selections', { fields: ['id', 'pause_reason'] })
      assert.equal(notReview.status, 400)
      assert.equal(notReview.body.error.code, 'invalid_request')
      assert.match(notReview.body.error.message, /pause_reason/)
      const twice = await fx.as('agent')('POST', '/v1/resources/subscriptions/selections', { exclude: [{ rule: 'a', filter: {} }, { rule: 'a', filter: {} }] })
      assert.equal(twice.status, 400)
      const unknownRule = await fx.as('agent')('GET', `/v1/selections/${article.selection_id}/excluded?rule=nope`)
      assert.equal(unknownRule.status, 400)
      assert.match(unknownRule.body.error.message, /disputed, legal_hold/)
      const missing = await fx.as('agent')('GET', '/v1/selections/sel_000000000000000000000000')
      assert.equal(missing.status, 404)
      assert.equal(missing.body.error.code, 'not_found')
    })

    test('an incomplete inventory is stored with its reasons; its recovery over the returned ids is complete and says so', async () => {
      const res = await fx.as('agent')('POST', '/v1/resources/subscriptions/selections', { filter: { region: 'eu' }, page_size: 100, budget: { max_pages: 1 } })
      assert.equal(res.status, 201, JSON.stringify(res.body))
      const partial = res.body
      assert.equal(partial.complete, false)
      assert.equal(partial.status, 'partial')
      assert.equal(partial.committable, false)
      assert.equal(partial.count, 100)
      assert.deepEqual(partial.incomplete_reasons.map((r: any) => r.code), ['CLIENT_LIMIT_REACHED'])
      assert.deepEqual(partial.incomplete_reasons[0].limit, { name: 'max_pages', value: 1 })
      assert.equal(partial.continuation.kind, 'next_cursor')
      assert.equal(partial.recovery.path, `/v1/selections/${partial.selection_id}/recover`)

      const stored = await fx.as('reviewer')('GET', `/v1/selections/${partial.selection_id}`)
      assert.equal(stored.body.complete, false)
      assert.deepEqual(stored.body.incomplete_reasons, partial.incomplete_reasons)

      const recovery = await fx.as('agent')('POST', partial.recovery.path)
      assert.equal(recovery.status, 201, JSON.stringify(recovery.body))
      assert.equal(recovery.body.recovery_of, partial.selection_id)
      assert.equal(recovery.body.complete, true)
      assert.equal(recovery.body.committable, true)
      assert.deepEqual(recovery.body.incomplete_reasons, [])
      assert.equal(recovery.body.count, 100)
      const returned = await allPages(fx, `/v1/selections/${partial.selection_id}/records`, 1000)
      assert.deepEqual(recovery.body.selector.filter, { id: { in: returned.map((r) => r.id) } })
      const recovered = await allPages(fx, `/v1/selections/${recovery.body.selection_id}/records`, 1000)
      assert.deepEqual(recovered.map((r) => r.id), returned.map((r) => r.id))
      assert.equal(recovery.body.digest, partial.digest, 'nothing changed upstream: same members, same versions')
    })

    test('an agent reads and creates selections only for resources in its scope (403)', async () => {
      const { token } = await fx.gateway.principals.issue({ name: 'invoices-agent', role: 'agent', scopes: { resources: ['invoices'], actions: '*' } })
      const auth = { authorization: `Bearer ${token}` }
      const create = await call(fx.base, 'POST', '/v1/resources/subscriptions/selections', { filter: {} }, auth)
      assert.equal(create.status, 403)
      assert.equal(create.body.error.code, 'forbidden')
      for (const path of [`/v1/selections/${article.selection_id}`, `/v1/selections/${article.selection_id}/records`, `/v1/selections/${article.selection_id}/export?format=csv`]) {
        const res = await call(fx.base, 'GET', path, undefined, auth)
        assert.equal(res.status, 403, path)
        assert.equal(res.body.error.code, 'forbidden')
      }
    })

    test('the OpenAPI document describes the selection routes', async () => {
      const res = await call(fx.base, 'GET', '/openapi.json')
      for (const path of ['/v1/resources/{resource}/selections', '/v1/selections/{id}', '/v1/selections/{id}/records', '/v1/selections/{id}/excluded', '/v1/selections/{id}/export', '/v1/selections/{id}/recover'])
        assert.ok(res.body.paths[path], path)
    })
  })
}

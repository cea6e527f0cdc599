import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Browser } from 'playwright-core'
import { sendJson, startUpstream, type TestUpstream } from '../connectors/http/upstream-server.js'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { launchBrowser, newContext, screenshot, signIn } from './support.js'

/**
 * An incomplete selection (its source answered the first page, then 503) is shown with an "Incomplete" banner, and
 * its parts 2 and 3 said more than the walk knows: "No exclusion rule. Nothing was set aside: every record the
 * filter matched is in the set", and of the manifest "nothing here is a sample", while records the walk never
 * reached may match the filter and are in no set. A real loopback API unlike the demo (its own paths and names).
 */
describe('an incomplete selection never says every matching record is in the set (Chromium, an http upstream)', () => {
  let up: TestUpstream
  let fx: GatewayFixture
  let browser: Browser
  let token = ''
  const items = ['i-1', 'i-2', 'i-3', 'i-4', 'i-5'].map((ref) => ({ ref, rev: 1, label: `L ${ref}`, phase: 'draft' }))
  before(async () => {
    // the first page answers three items and a cursor; the page after it is a 503: the walk stops there
    up = await startUpstream((req, res) =>
      req.url.searchParams.get('after') ? sendJson(res, 503, { err: 'down' }) : sendJson(res, 200, { data: items.slice(0, 3), more: 'p2' }),
    )
    fx = await startDemoGateway({
      store: 'sqlite',
      count: 20,
      edit: (c) => {
        c.resources.items = {
          description: 'items of a v2 API',
          environment: { name: 'items-staging', host: up.origin },
          connector: {
            kind: 'http',
            sources: [{ name: 'v2', base_url: up.origin }],
            list: { path: '/v2/items', items_path: 'data', pagination: { style: 'cursor', param: 'after', next_cursor_path: 'more' } },
            get: { path: '/v2/items/{id}' },
            version: { from: 'field', field: 'rev' },
          },
          id_field: 'ref',
          fields: { ref: 'string', rev: 'integer', label: 'string', phase: 'string' },
          review_fields: ['ref', 'label', 'phase'],
          actions: { publish: { set: { phase: 'live' }, precondition: { phase: 'draft' }, write: { method: 'PATCH', path: '/v2/items/{id}', body: { phase: '{{set.phase}}' } } } },
        }
      },
    })
    token = (await fx.gateway.principals.issue({ name: 'items-agent', role: 'agent', scopes: { resources: ['items'], actions: '*' } })).token
    browser = await launchBrowser()
  })
  after(async () => {
    await browser?.close()
    await fx?.close()
    await up?.close()
  })
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${fx.base}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
    const json = await res.json()
    assert.ok(res.status === 201 || res.status === 200, JSON.stringify(json))
    return json
  }

  test('parts 2 and 3 of the plan and selection pages say the set holds only what the walk read', async () => {
    const bare = await post('/v1/resources/items/selections', { filter: { phase: 'draft' } })
    const ruled = await post('/v1/resources/items/selections', { filter: { phase: 'draft' }, exclude: [{ rule: 'first', filter: { ref: 'i-1' } }] })
    assert.equal(bare.complete, false, JSON.stringify(bare))
    const plan = await post(`/v1/selections/${bare.selection_id}/plans`, { action: { type: 'publish' } })
    const page = await (await newContext(browser)).newPage()
    await signIn(page, fx, 'reviewer', `/review/plans/${plan.plan_id}`)
    for (const path of [`/review/plans/${plan.plan_id}`, `/review/selections/${bare.selection_id}`]) {
      await page.goto(`${fx.base}${path}`)
      const rules = await page.getByTestId('no-exclusions').innerText()
      assert.doesNotMatch(rules, /every record the filter matched is in the set/, `${path}: ${rules}`)
      assert.match(rules, /never reached/, `${path}: ${rules}`)
      const records = await page.locator('section', { has: page.getByTestId('manifest-count') }).locator('p').first().innerText()
      assert.doesNotMatch(records, /nothing here is a sample/, `${path}: ${records}`)
      assert.match(records, /not every record the filter matches/, `${path}: ${records}`)
    }
    await screenshot(page, 'incomplete-set-wording')
    // with a rule: what it removed is counted among the records read, and the page says so beside the count
    await page.goto(`${fx.base}/review/selections/${ruled.selection_id}`)
    const table = await page.getByTestId('exclusions').innerText()
    assert.match(table, /1 rule removed 1 record/, table)
    assert.match(await page.locator('section', { has: page.getByTestId('exclusions') }).innerText(), /of the records the walk read/)
  })
})

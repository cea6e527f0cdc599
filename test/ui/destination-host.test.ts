import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Browser } from 'playwright-core'
import { startOddUpstream, thingsResourceConfig, type OddUpstream } from '../plans/support/odd-upstream.js'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { launchBrowser, newContext, signIn } from './support.js'

/**
 * The environment's `host` is words the operator wrote; the connector's base_url is where the writes land. A config
 * whose label still says staging while its base_url was pointed elsewhere (copied from another resource, edited in
 * haste) had the review pages name the label's host only, so a reviewer approved writes to a host no page named.
 */
describe('review pages: the host the connector reaches is named beside the environment label', () => {
  let up: OddUpstream
  let fx: GatewayFixture
  let browser: Browser
  let token: string
  before(async () => {
    up = await startOddUpstream()
    fx = await startDemoGateway({
      store: 'sqlite',
      count: 20,
      edit: (c) => {
        c.resources.things = { ...thingsResourceConfig(up.origin), environment: { name: 'things-staging', host: 'staging.things.internal' } }
        // a name that reads as staging over a base_url whose host reads as production (nothing answers there)
        const eu = thingsResourceConfig('https://api.prod.example.invalid') as any
        c.resources.things_eu = { ...eu, environment: { name: 'things-eu-staging', account: 'eu' } }
      },
    })
    token = (await fx.gateway.principals.issue({ name: 'things-agent', role: 'agent', scopes: { resources: ['things', 'things_eu'], actions: '*' } })).token
    browser = await launchBrowser()
  })
  after(async () => {
    await browser?.close()
    await fx?.close()
    await up?.close()
  })

  async function post(path: string, body: unknown): Promise<any> {
    const res = await fetch(`${fx.base}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
    const json = await res.json()
    assert.ok(res.status === 201 || res.status === 200, JSON.stringify(json))
    return json
  }

  test('the plan and selection pages name the base_url host and warn that the label names another', async () => {
    const selection = await post('/v1/resources/things/selections', { filter: { status: 'open' } })
    const plan = await post(`/v1/selections/${selection.selection_id}/plans`, { action: { type: 'set_status', params: { status: 'closed' } } })
    const actual = new URL(up.origin).host
    const page = await (await newContext(browser)).newPage()
    await signIn(page, fx, 'reviewer', `/review/plans/${plan.plan_id}`)
    for (const path of [`/review/plans/${plan.plan_id}`, `/review/selections/${selection.selection_id}`]) {
      await page.goto(`${fx.base}${path}`)
      const banner = await page.getByRole('region', { name: 'Environment' }).innerText()
      assert.match(banner, /things-staging \(host staging\.things\.internal\)/, path)
      assert.ok(banner.includes(`Connector reaches ${actual}`), `${path}: ${banner}`)
      assert.match(banner, new RegExp(`the label names host staging\\.things\\.internal, not ${actual.replace(/\./g, '\\.')}`), `${path}: ${banner}`)
    }
  })

  test('a connector host that reads as production gets the production banner, whatever the environment is named', async () => {
    const selection = await post('/v1/resources/things_eu/selections', { filter: {} })
    assert.equal(selection.complete, false, 'nothing answers at the production host')
    const page = await (await newContext(browser)).newPage()
    await signIn(page, fx, 'reviewer', `/review/selections/${selection.selection_id}`)
    const banner = page.getByRole('region', { name: 'Environment' })
    assert.match(await banner.innerText(), /Read from production\s+things-eu-staging \(acct eu\)[\s\S]*Connector reaches api\.prod\.example\.invalid/i)
    assert.match((await banner.getAttribute('class')) ?? '', /\bprod\b/)
  })
})

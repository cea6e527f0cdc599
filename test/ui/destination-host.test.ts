import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { mislabelledHostOf } from '../../src/config/index.js'
import { thingsResourceConfig } from '../plans/support/odd-upstream.js'
import { createSelection, demoGatewayWithBrowser, newContext, signIn } from './support.js'
import { thingsGatewayWithBrowser } from './things-support.js'

/**
 * The environment's `host` is words the operator wrote; the connector's base_url is where the writes land. A config
 * whose label still says staging while its base_url was pointed elsewhere (copied from another resource, edited in
 * haste) had the review pages name the label's host only, so a reviewer approved writes to a host no page named.
 */
describe('review pages: the host the connector reaches is named beside the environment label', () => {
  const t = thingsGatewayWithBrowser(['things', 'things_eu'], (c, origin) => {
    c.resources.things = { ...thingsResourceConfig(origin), environment: { name: 'things-staging', host: 'staging.things.internal' } }
    // a name that reads as staging over a base_url whose host reads as production (nothing answers there)
    c.resources.things_eu = { ...thingsResourceConfig('https://api.prod.example.invalid'), environment: { name: 'things-eu-staging', account: 'eu' } }
  })

  test('the plan and selection pages name the base_url host and warn that the label names another', async () => {
    const selection = await t.post('/v1/resources/things/selections', { filter: { status: 'open' } })
    const plan = await t.post(`/v1/selections/${selection.selection_id}/plans`, { action: { type: 'set_status', params: { status: 'closed' } } })
    const actual = new URL(t.up.origin).host
    const page = await (await newContext(t.browser)).newPage()
    await signIn(page, t.fx, 'reviewer', `/review/plans/${plan.plan_id}`)
    for (const path of [`/review/plans/${plan.plan_id}`, `/review/selections/${selection.selection_id}`]) {
      await page.goto(`${t.fx.base}${path}`)
      const banner = await page.getByRole('region', { name: 'Environment' }).innerText()
      assert.match(banner, /things-staging \(host staging\.things\.internal\)/, path)
      assert.ok(banner.includes(`Connector reaches ${actual}`), `${path}: ${banner}`)
      assert.match(banner, new RegExp(`the label names host staging\\.things\\.internal, not ${actual.replace(/\./g, '\\.')}`), `${path}: ${banner}`)
    }
  })

  test('a connector host that reads as production gets the production banner, whatever the environment is named', async () => {
    const selection = await t.post('/v1/resources/things_eu/selections', { filter: {} })
    assert.equal(selection.complete, false, 'nothing answers at the production host')
    const page = await (await newContext(t.browser)).newPage()
    await signIn(page, t.fx, 'reviewer', `/review/selections/${selection.selection_id}`)
    const banner = page.getByRole('region', { name: 'Environment' })
    assert.match(await banner.innerText(), /Read from production\s+things-eu-staging \(acct eu\)[\s\S]*Connector reaches api\.prod\.example\.invalid/i)
    assert.match((await banner.getAttribute('class')) ?? '', /\bprod\b/)
  })

  test('the queue bolds such a plan as production, naming the host, as its page does; a staging host stays plain', async () => {
    const prodSelection = await t.post('/v1/resources/things_eu/selections', { filter: {} })
    const prodPlan = await t.post(`/v1/selections/${prodSelection.selection_id}/plans`, { action: { type: 'set_status', params: { status: 'closed' } } })
    const stagingSelection = await t.post('/v1/resources/things/selections', { filter: { status: 'open' } })
    const stagingPlan = await t.post(`/v1/selections/${stagingSelection.selection_id}/plans`, { action: { type: 'set_status', params: { status: 'closed' } } })
    const page = await (await newContext(t.browser)).newPage()
    await signIn(page, t.fx, 'reviewer', '/review')
    const cellOf = (planId: string) => page.getByTestId('queue').locator(`tr[data-plan-id="${planId}"] td`).first()
    assert.equal(await cellOf(prodPlan.plan_id).locator('strong').innerText(), 'things-eu-staging (acct eu)')
    assert.match(await cellOf(prodPlan.plan_id).innerText(), /\(production: the connector reaches api\.prod\.example\.invalid\)/)
    assert.equal(await cellOf(stagingPlan.plan_id).locator('strong').count(), 0, await cellOf(stagingPlan.plan_id).innerText())
    assert.doesNotMatch(await cellOf(stagingPlan.plan_id).innerText(), /production/)
  })
})

describe('review pages: a sql resource on PostgreSQL names the database host', () => {
  const d = demoGatewayWithBrowser({ store: 'sqlite', count: 40, upstream: 'postgres' })
  test('the banner names the server the database URL connects to, and the sqlite label as naming another', async () => {
    const selection = await createSelection(d.fx, { filter: { status: 'past_due', region: 'eu' } })
    const page = await (await newContext(d.browser)).newPage()
    await signIn(page, d.fx, 'reviewer', `/review/selections/${selection.selection_id}`)
    const banner = await page.getByRole('region', { name: 'Environment' }).innerText()
    const host = new URL(d.fx.upstreamUrl).hostname
    assert.ok(banner.includes(`Connector reaches ${host} (the label names host demo.sqlite (local), not ${host}`), banner)
  })
})


test('a label names a host only as a whole name, its port aside', () => {
  const label = (host: string, hosts: string[]) => mislabelledHostOf({ name: 'billing', host }, hosts)
  assert.equal(label('10.0.0.50', ['10.0.0.5:8443']), '10.0.0.50')
  assert.equal(label('api.example.com.staging.internal', ['api.example.com']), 'api.example.com.staging.internal')
  assert.equal(label('staging-api.example.com', ['api.example.com']), 'staging-api.example.com')
  assert.equal(label('https://api.example.com/v1', ['api.example.com']), null)
  assert.equal(label('API.example.com (EU)', ['api.example.com:443']), null)
  assert.equal(label('db.internal', ['db.internal']), null)
  assert.equal(label('anything', []), null)
})

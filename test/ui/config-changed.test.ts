import assert from 'node:assert/strict'
import { serve, type ServerType } from '@hono/node-server'
import type { AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import type { Browser } from 'playwright-core'
import { createApp } from '../../src/api/index.js'
import type { WarrantConfig } from '../../src/config/index.js'
import { type Gateway, createLogger, openGateway } from '../../src/gateway/index.js'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { createSelection, launchBrowser, newContext, proposePlan, signIn } from './support.js'

describe('review pages: a plan proposed before the config changed', () => {
  let fx: GatewayFixture
  let browser: Browser
  let restarted: Gateway
  let server: ServerType
  let base: string
  let gone: any
  let moved: any

  before(async () => {
    fx = await startDemoGateway({ store: 'sqlite', count: 300 })
    browser = await launchBrowser()
    gone = await proposePlan(fx, (await createSelection(fx, { filter: { status: 'past_due', region: 'us' } })).selection_id, { type: 'resume_collection', params: {} })
    moved = await proposePlan(fx, (await createSelection(fx, { filter: { status: 'past_due', region: 'apac' } })).selection_id, { type: 'pause_collection', params: { reason: 'r' } })
    // The operator removes one action and points the resource at another environment, then restarts on the same store.
    const config = structuredClone(fx.config) as WarrantConfig & { resources: Record<string, any> }
    delete config.resources.subscriptions.actions.resume_collection
    config.resources.subscriptions.environment = { name: 'billing-prod', account: '9000', host: 'prod-db' }
    restarted = await openGateway({ config, log: createLogger({ level: 'silent' }) })
    const app = createApp({ gateway: restarted })
    server = await new Promise<ServerType>((resolve) => {
      const s = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s))
    })
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  after(async () => {
    await browser?.close()
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()))
    await restarted?.close()
    await fx?.close()
  })

  test('whose action is no longer configured: the page still shows it, says it cannot run, offers no Approve, and it can be rejected', async () => {
    const page = await (await newContext(browser)).newPage()
    assert.equal(await signIn(page, { ...fx, base }, 'reviewer', `/review/plans/${gone.plan_id}`), 200)
    assert.match(await page.locator('h1').innerText(), /resume_collection on \d+ records/)
    assert.match(await page.getByTestId('cannot-approve').innerText(), /no longer configured[\s\S]*action_removed/)
    assert.equal(await page.getByTestId('approve').count(), 0)
    assert.ok((await page.getByTestId('manifest').locator('tbody tr').count()) > 0, 'the manifest is still listed')
    await Promise.all([page.waitForURL(/decided=reject/), page.getByTestId('reject').click()])
    assert.equal((await fx.as('agent')('GET', `/v1/plans/${gone.plan_id}`)).body.state, 'rejected')
    await page.context().close()
  })

  test('whose resource now writes to another environment: the page names both and offers no Approve', async () => {
    const page = await (await newContext(browser)).newPage()
    await signIn(page, { ...fx, base }, 'reviewer', `/review/plans/${moved.plan_id}`)
    const why = await page.getByTestId('cannot-approve').innerText()
    assert.match(why, /billing-prod \(acct 9000, host prod-db\)/)
    assert.match(why, /billing-demo \(acct 4411/)
    assert.match(why, /environment_changed/)
    assert.equal(await page.getByTestId('approve').count(), 0)
    assert.equal(await page.getByTestId('reject').count(), 1)
    await page.context().close()
  })
})

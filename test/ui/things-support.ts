import assert from 'node:assert/strict'
import { after, before } from 'node:test'
import type { Browser } from 'playwright-core'
import { startOddUpstream, type OddUpstream } from '../plans/support/odd-upstream.js'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { launchBrowser } from './support.js'

export interface ThingsWithBrowser {
  readonly up: OddUpstream
  readonly fx: GatewayFixture
  readonly browser: Browser
  /** JSON POST as an agent scoped to `resources`; asserts 200 or 201 and answers the body. */
  post(path: string, body: unknown): Promise<any>
}

/**
 * For the tests of one describe block: an odd http upstream (node:http on loopback), a demo gateway whose config
 * `edit` adds resources over it (given its origin), an agent scoped to `resources`, and Chromium.
 */
export function thingsGatewayWithBrowser(resources: readonly string[], edit: (config: Record<string, any>, origin: string) => void): ThingsWithBrowser {
  let up: OddUpstream | undefined
  let fx: GatewayFixture | undefined
  let browser: Browser | undefined
  let token = ''
  before(async () => {
    up = await startOddUpstream()
    const origin = up.origin
    fx = await startDemoGateway({ store: 'sqlite', count: 20, edit: (c) => edit(c, origin) })
    token = (await fx.gateway.principals.issue({ name: 'things-agent', role: 'agent', scopes: { resources: [...resources], actions: '*' } })).token
    browser = await launchBrowser()
  })
  after(async () => {
    await browser?.close()
    await fx?.close()
    await up?.close()
  })
  const started = <T,>(value: T | undefined): T => value ?? assert.fail('started before the tests')
  return {
    get up() {
      return started(up)
    },
    get fx() {
      return started(fx)
    },
    get browser() {
      return started(browser)
    },
    async post(path: string, body: unknown): Promise<any> {
      const res = await fetch(`${started(fx).base}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
      const json = await res.json()
      assert.ok(res.status === 201 || res.status === 200, JSON.stringify(json))
      return json
    },
  }
}

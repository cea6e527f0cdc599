import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { after, before } from 'node:test'
import { type Browser, type BrowserContext, type Page, chromium } from 'playwright-core'
import { type GatewayFixture, type GatewayFixtureOptions, startDemoGateway } from '../support/gateway-fixture.js'

/** Where the browser tests write their screenshots (gitignored; CI keeps the folder). */
export const SCREENSHOTS = join(import.meta.dirname, '..', '..', 'test-artifacts', 'screenshots')

export const ARTICLE_SELECTION = {
  filter: { status: 'past_due', region: 'eu' },
  exclude: [
    { rule: 'disputed', filter: { tags: { contains: 'disputed' } } },
    { rule: 'legal_hold', filter: { tags: { contains: 'legal_hold' } } },
  ],
}
export const PAUSE = { type: 'pause_collection', params: { reason: 'approved credit hold review' } }

/** Debian's Chromium, driven by playwright-core (no browser download). */
export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.WARRANT_TEST_CHROMIUM ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  })
}

/**
 * A demo gateway and Chromium for the tests of one describe block: started before them, closed after them.
 * Read `fx` and `browser` inside a test (they are set by then).
 */
export function demoGatewayWithBrowser(options: GatewayFixtureOptions): { readonly fx: GatewayFixture; readonly browser: Browser } {
  let fx: GatewayFixture | undefined
  let browser: Browser | undefined
  before(async () => {
    fx = await startDemoGateway(options)
    browser = await launchBrowser()
  })
  after(async () => {
    await browser?.close()
    await fx?.close()
  })
  return {
    get fx() {
      return fx ?? assert.fail('the gateway is started before the tests')
    },
    get browser() {
      return browser ?? assert.fail('the browser is launched before the tests')
    },
  }
}

export async function newContext(browser: Browser, width = 1280): Promise<BrowserContext> {
  return browser.newContext({ viewport: { width, height: width < 600 ? 812 : 900 }, acceptDownloads: true, locale: 'en-US' })
}

/** Signs a principal in through the sign-in page, as a person would: with one of the fixture's tokens, or `{ token }`. */
export async function signIn(page: Page, fx: GatewayFixture, who: 'reviewer' | 'reviewer2' | 'admin' | 'agent' | { readonly token: string } = 'reviewer', next?: string): Promise<number> {
  await page.goto(`${fx.base}/review/sign-in${next ? `?next=${encodeURIComponent(next)}` : ''}`)
  await page.getByLabel('Reviewer token').fill(typeof who === 'string' ? fx.tokens[who] : who.token)
  const [response] = await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Sign in' }).click()])
  return response?.status() ?? 0
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true })
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true })
}

/** Rows of a CSV text (quoted fields may hold commas, quotes and line breaks). */
export function csvRows(text: string): string[][] {
  const rows: string[][] = []
  let row: string[] = []
  let cell = ''
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        cell += '"'
        i++
      } else if (ch === '"') quoted = false
      else cell += ch
    } else if (ch === '"') quoted = true
    else if (ch === ',') {
      row.push(cell)
      cell = ''
    } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && text[i + 1] === '\n') i++
      row.push(cell)
      rows.push(row)
      row = []
      cell = ''
    } else cell += ch
  }
  if (cell !== '' || row.length > 0) {
    row.push(cell)
    rows.push(row)
  }
  return rows
}

export async function createSelection(fx: GatewayFixture, body: unknown = ARTICLE_SELECTION): Promise<any> {
  const res = await fx.as('agent')('POST', '/v1/resources/subscriptions/selections', body)
  assert.equal(res.status, 201, JSON.stringify(res.body))
  return res.body
}

export async function proposePlan(fx: GatewayFixture, selectionId: string, action: unknown = PAUSE): Promise<any> {
  const res = await fx.as('agent')('POST', `/v1/selections/${selectionId}/plans`, { action })
  assert.ok(res.status === 201 || res.status === 200, JSON.stringify(res.body))
  return res.body
}

export async function waitForOperation(fx: GatewayFixture, operationId: string, timeoutMs = 60_000): Promise<any> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const res = await fx.as('agent')('GET', `/v1/operations/${operationId}`)
    assert.equal(res.status, 200, JSON.stringify(res.body))
    if (['succeeded', 'completed_with_skips', 'completed_with_unknown', 'partially_failed', 'failed', 'halted'].includes(res.body.state)) return res.body
    if (Date.now() > deadline) assert.fail(`operation ${operationId} did not finish: ${JSON.stringify(res.body)}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

export interface ReceivedHook {
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: string
}

/**
 * A webhook receiver on loopback: records every request; `status(path, n)` decides the answer (`n`: how many
 * requests came before), and may take its time (a promise): a receiver slow past the timeout, or one that hangs.
 */
export async function startReceiver(status: (path: string, n: number) => number | Promise<number> = () => 204): Promise<{ url: string; received: ReceivedHook[]; close(): Promise<void> }> {
  const received: ReceivedHook[] = []
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const n = received.length
      received.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') })
      void Promise.resolve(status(req.url ?? '', n)).then((code) => {
        if (res.writable) res.writeHead(code).end()
      })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () => {
      server.closeAllConnections()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

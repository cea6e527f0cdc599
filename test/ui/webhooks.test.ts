import assert from 'node:assert/strict'
import { createHmac } from 'node:crypto'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import type { Browser } from 'playwright-core'
import { verifySignature } from '../../src/notifications/index.js'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { createTempDir, type TempDir } from '../support/stores.js'
import { ARTICLE_SELECTION, PAUSE, type ReceivedHook, createSelection, launchBrowser, newContext, proposePlan, signIn, startReceiver, waitForOperation } from './support.js'

const SECRET = 'whsec-test-0123456789abcdef'
const PUBLIC_URL = 'http://warrant.test:8787'

async function until(check: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 25))
  }
}

describe('webhooks: signed notifications when a plan awaits review, is decided, and when its operation ends', () => {
  let fx: GatewayFixture
  let browser: Browser
  let dir: TempDir
  let good: Awaited<ReturnType<typeof startReceiver>>
  let bad: Awaited<ReturnType<typeof startReceiver>>
  before(async () => {
    good = await startReceiver(() => 204)
    bad = await startReceiver(() => 500)
    dir = await createTempDir('warrant-webhook-')
    const secretFile = join(dir.path, 'webhook-secret')
    await writeFile(secretFile, `${SECRET}\n`)
    fx = await startDemoGateway({
      store: 'sqlite',
      count: 2000,
      edit: (raw) => {
        raw.server = { ...(raw.server ?? {}), public_url: PUBLIC_URL }
        raw.notifications = {
          webhooks: [
            { name: 'reviewers', url: `${good.url}/hook`, secret: { file: secretFile }, format: 'json' },
            { name: 'chat', url: `${good.url}/slack`, format: 'slack', events: ['plan.awaiting_review'] },
            { name: 'broken', url: `${bad.url}/hook`, secret: { file: secretFile } },
          ],
          retry: { max_attempts: 3, initial_backoff_ms: 20, max_backoff_ms: 100 },
          // Real time is not the point here: a receiver slow to answer on a busy machine must not look like a failure
          // and be delivered twice (the 'once' below), so the timeout is far above any scheduling delay.
          timeout_ms: 30_000,
        }
      },
    })
    browser = await launchBrowser()
  })
  after(async () => {
    await browser?.close()
    await fx?.close()
    await good?.close()
    await bad?.close()
    await dir?.drop()
  })

  test('each event reaches the receiver once, signed; a failing receiver is retried with backoff and its failure shows on the plan page', async () => {
    const selection = await createSelection(fx, ARTICLE_SELECTION)
    const plan = await proposePlan(fx, selection.selection_id, PAUSE)
    const approval = await fx.as('reviewer')('POST', `/v1/plans/${plan.plan_id}/approvals`, { decision: 'approve', expected_plan_digest: plan.plan_digest })
    assert.equal(approval.status, 201)
    const commit = await fx.as('agent')('POST', `/v1/plans/${plan.plan_id}/commit`, { expected_digest: plan.plan_digest }, { 'idempotency-key': `hooks-${plan.plan_id}` })
    assert.equal(commit.status, 202)
    const operation = await waitForOperation(fx, commit.body.operation_id)

    const hooks = () => good.received.filter((r) => r.path === '/hook')
    await until(() => hooks().some((r) => r.headers['x-warrant-event'] === 'operation.finished'), 'the operation.finished notification')
    await fx.gateway.notifications.flush()

    // One delivery per event, in order, each signed over "<timestamp>.<body>" with the shared secret.
    const received = hooks()
    assert.deepEqual(
      received.map((r) => r.headers['x-warrant-event']),
      ['plan.awaiting_review', 'plan.decided', 'operation.finished'],
    )
    for (const hook of received) {
      const timestamp = String(hook.headers['x-warrant-timestamp'])
      const expected = `sha256=${createHmac('sha256', SECRET).update(`${timestamp}.${hook.body}`).digest('hex')}`
      assert.equal(hook.headers['x-warrant-signature'], expected)
      assert.ok(Math.abs(Date.now() / 1000 - Number(timestamp)) < 120)
      assert.equal(hook.headers['content-type'], 'application/json')
      assert.ok(verifySignature({ secret: SECRET, body: hook.body, timestamp, signature: String(hook.headers['x-warrant-signature']) }))
      assert.equal(verifySignature({ secret: SECRET, body: hook.body.replace('pause_collection', 'delete_account'), timestamp, signature: String(hook.headers['x-warrant-signature']) }), false)
      const body = JSON.parse(hook.body)
      assert.equal(body.delivery_id, hook.headers['x-warrant-delivery'])
      assert.equal(body.environment, 'billing-demo (acct 4411, host demo.sqlite (local))')
      assert.equal(body.resource, 'subscriptions')
      assert.equal(body.action, 'pause_collection')
      assert.equal(body.target_count, selection.count)
      assert.equal(body.plan_id, plan.plan_id)
      assert.equal(body.plan_url, `${PUBLIC_URL}/review/plans/${plan.plan_id}`)
      assert.match(body.text, /billing-demo \(acct 4411/)
      assert.match(body.text, new RegExp(`pause_collection on ${selection.count} records`))
      assert.match(body.text, /http:\/\/warrant\.test:8787\/review\//)
    }
    const [awaiting, decided, finished] = received.map((r) => JSON.parse(r.body))
    assert.equal(awaiting.outcome.reviewers_needed, 1)
    assert.equal(decided.outcome.decision, 'approve')
    assert.equal(decided.outcome.decided_by, 'alice')
    assert.equal(decided.outcome.plan_state, 'approved')
    assert.equal(finished.operation_id, operation.operation_id)
    assert.equal(finished.operation_url, `${PUBLIC_URL}/review/operations/${operation.operation_id}`)
    assert.deepEqual(finished.outcome.counts, operation.counts)
    assert.equal(finished.outcome.state, operation.state)

    // Never record data: no member id, no action parameter text, no field value.
    const members: string[] = []
    let cursor: string | null = null
    do {
      const page: any = await fx.as('agent')('GET', `/v1/selections/${selection.selection_id}/records?limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)
      members.push(...page.body.records.map((r: any) => r.id))
      cursor = page.body.next_cursor
    } while (cursor)
    const all = [...good.received, ...bad.received].map((r: ReceivedHook) => r.body).join('\n')
    for (const id of members) assert.ok(!all.includes(id), `record id ${id} must not leave in a notification`)
    assert.ok(!all.includes(PAUSE.params.reason), 'action parameters (free text) stay out of notifications')
    assert.ok(!all.includes('example.com'), 'no field value (owners) in notifications')

    // The Slack-compatible webhook: one text line with the environment, action, count and a link; subscribed to one event.
    const slack = good.received.filter((r) => r.path === '/slack')
    assert.equal(slack.length, 1)
    assert.equal(slack[0]!.headers['x-warrant-signature'], undefined, 'no secret configured: unsigned')
    const text = JSON.parse(slack[0]!.body).text as string
    assert.match(text, /^Review needed in billing-demo \(acct 4411, host demo\.sqlite \(local\)\): pause_collection on \d+ records of subscriptions/)
    assert.match(text, new RegExp(`<${PUBLIC_URL}/review/plans/${plan.plan_id}\\|Open the plan>$`))

    // The failing receiver: three attempts per event (the same delivery id each time), then failed.
    const byDelivery = new Map<string, number>()
    for (const r of bad.received) byDelivery.set(String(r.headers['x-warrant-delivery']), (byDelivery.get(String(r.headers['x-warrant-delivery'])) ?? 0) + 1)
    assert.equal(byDelivery.size, 3)
    assert.deepEqual([...byDelivery.values()], [3, 3, 3])
    const deliveries = await fx.gateway.notifications.deliveries({ plan_id: plan.plan_id })
    const broken = deliveries.filter((d) => d.webhook === 'broken')
    assert.equal(broken.length, 3)
    for (const d of broken) {
      assert.equal(d.state, 'failed')
      assert.equal(d.attempts, 3)
      assert.equal(d.last_status, 500)
      assert.match(d.last_error ?? '', /HTTP 500/)
    }
    assert.ok(deliveries.filter((d) => d.webhook === 'reviewers').every((d) => d.state === 'delivered' && d.attempts === 1))

    // The failure is visible to the reviewer on the plan page.
    const page = await (await newContext(browser)).newPage()
    await signIn(page, fx, 'reviewer2', `/review/plans/${plan.plan_id}`)
    assert.match(await page.getByTestId('notification-failures').innerText(), /3 notifications could not be delivered/)
    const table = await page.getByTestId('deliveries').innerText()
    assert.match(table, /broken/)
    assert.match(table, /the receiver answered HTTP 500/)
    assert.match(table, /delivered/)
    await page.context().close()
  })
})

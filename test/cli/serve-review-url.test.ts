import assert from 'node:assert/strict'
import { test } from 'node:test'
import { caller } from '../operations/support/flow.js'
import { issueTokens, startServe, stopServe } from '../operations/support/serve-process.js'
import { createCliWorkspace } from '../support/cli-config.js'

test('warrant serve --port 0 without public_url: review_url points at the port the server got, not the configured one', { timeout: 120_000 }, async () => {
  const ws = await createCliWorkspace({ count: 300 })
  let child: Awaited<ReturnType<typeof startServe>>['child'] | undefined
  try {
    const { agentToken } = await issueTokens(ws.configPath, { resource: 'subscriptions', actions: ['pause_collection'] })
    const served = await startServe(ws.configPath)
    child = served.child
    const port = Number(new URL(served.base).port)
    assert.notEqual(port, 8787, 'the system chose the port (the config says 8787)')
    const agent = caller(served.base, agentToken)
    const selection = await agent('POST', '/v1/resources/subscriptions/selections', { filter: { status: 'past_due' } })
    assert.equal(selection.status, 201, JSON.stringify(selection.body))
    const plan = await agent('POST', `/v1/selections/${selection.body.selection_id}/plans`, { action: { type: 'pause_collection', params: { reason: 'credit hold' } } })
    assert.equal(plan.status, 201, JSON.stringify(plan.body))
    assert.equal(plan.body.review_url, `${served.base}/review/plans/${plan.body.plan_id}`)
    // and the link opens the page (a sign-in redirect or the page itself, never a refused connection)
    const page = await fetch(plan.body.review_url, { redirect: 'manual' })
    assert.ok(page.status < 500, `the review link answers (${page.status})`)
  } finally {
    if (child) await stopServe(child, 'SIGTERM')
    await ws.drop()
  }
})

import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import type { Browser } from 'playwright-core'
import { runWarrant } from '../support/cli-config.js'
import { startDemoGateway } from '../support/gateway-fixture.js'
import { STORE_KINDS } from '../support/stores.js'
import { assertAnswered, callTool, connectStdio, type McpWorld, text } from '../mcp/support.js'
import { launchBrowser, newContext, signIn } from '../ui/support.js'
import { startFaultUsers } from './support/fault-users.js'
import { caller, selectProposeApprove, waitForOperation } from './support/flow.js'
import { userIdOf, usersResourceConfig } from './support/users-upstream.js'

/**
 * The 429s (and 503s with Retry-After) each target met were counted on its row (`rate_limit_hits`, migration 0015)
 * but no view showed them: a reviewer reading an operation could not tell the upstream throttled it (why it was
 * slow, that targets were asked again). Each result now carries its count and the operation its total and the
 * targets throttled, on HTTP, MCP (a real `warrant mcp` subprocess), the CLI (a real subprocess) and the web page.
 * A real loopback upstream answers 429 with Retry-After: 1 to the first target twice and to the second once.
 */
const THROTTLED: Record<string, number> = { [userIdOf(1)]: 2, [userIdOf(2)]: 1, [userIdOf(3)]: 0 }

describe('rate limit hits per target and in total, on every surface', () => {
  let browser: Browser
  before(async () => {
    browser = await launchBrowser()
  })
  after(async () => {
    await browser?.close()
  })

  for (const kind of STORE_KINDS)
    test(`${kind}: results count each target's 429s; the operation their total, on HTTP, MCP, CLI and the web page`, { timeout: 120_000 }, async () => {
      const upstream = await startFaultUsers(3)
      let raw: Record<string, any> = {}
      const fx = await startDemoGateway({
        store: kind,
        count: 50,
        edit: (config) => {
          config.resources.users = usersResourceConfig(upstream.origin)
          config.execution = { concurrency: 1, batch_size: 10 }
          raw = config
        },
      })
      try {
        const configPath = join(fx.dir, 'warrant.json')
        writeFileSync(configPath, JSON.stringify(raw, null, 2))
        upstream.onWrite = (t) => {
          if ((upstream.writes.get(t.id) ?? 0) <= (THROTTLED[t.id] ?? 0)) return t.send(429, { error: 'slow down' }, { 'retry-after': '1' })
          t.send(...t.apply())
        }
        const token = (await fx.gateway.principals.issue({ name: 'users-agent', role: 'agent', scopes: { resources: ['users'], actions: ['set_role'] } })).token
        const agent = caller(fx.base, token)
        const action = { type: 'set_role', role: 'viewer' }
        const { selection } = await selectProposeApprove(agent, [fx.as('reviewer')], 'users', { filter: { status: 'active' } }, action)
        const commit = await agent('POST', '/v1/resources/users/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action }, { 'idempotency-key': `hits-${kind}` })
        assert.equal(commit.status, 202, JSON.stringify(commit.body))
        const id = commit.body.operation_id as string

        // HTTP
        const op = await waitForOperation(agent, id, 30_000)
        assert.equal(op.state, 'succeeded', JSON.stringify(op))
        assert.equal(op.rate_limit_hits, 3)
        assert.equal(op.rate_limited_targets, 2)
        const results = (await agent('GET', `/v1/operations/${id}/results`)).body
        assert.deepEqual(Object.fromEntries(results.results.map((r: any) => [r.id, r.rate_limit_hits])), THROTTLED)

        // MCP: the official client, `warrant mcp` as a subprocess on the same store
        const { client } = await connectStdio({ configPath } as McpWorld, token)
        try {
          const overview = await callTool(client, 'get_operation', { operation_id: id })
          assert.deepEqual(assertAnswered(overview), op, 'the same view as HTTP')
          assert.match(text(overview), /answered "not now" \(429, or 503 with Retry-After\) 3 times on 2 targets/, text(overview))
          const page = await callTool(client, 'get_operation', { operation_id: id, part: 'results' })
          assert.deepEqual(Object.fromEntries(assertAnswered(page).results.map((r: any) => [r.id, r.rate_limit_hits])), THROTTLED)
          assert.match(text(page), /2 targets of this page met "not now" .* 3 times in all/, text(page))
        } finally {
          await client.close()
        }

        // CLI: a real subprocess on the same config
        const show = await runWarrant(['operation', 'show', id, '--config', configPath], fx.dir)
        assert.equal(show.code, 0, show.stderr)
        assert.match(show.stdout, /rate limited: the upstream answered "not now" \(429, or 503 with Retry-After\) 3 time\(s\) on 2 target\(s\)/, show.stdout)
        const listed = await runWarrant(['operation', 'results', id, '--config', configPath], fx.dir)
        assert.equal(listed.code, 0, listed.stderr)
        const line = (n: number) => listed.stdout.split('\n').find((l) => l.includes(userIdOf(n))) ?? ''
        assert.match(line(1), /rate limited 2x/, listed.stdout)
        assert.match(line(2), /rate limited 1x/, listed.stdout)
        assert.doesNotMatch(line(3), /rate limited/, listed.stdout)

        // the web page, in Chromium
        const tab = await (await newContext(browser)).newPage()
        await signIn(tab, fx, 'reviewer', `/review/operations/${id}`)
        assert.match(await tab.getByTestId('rate-limited').innerText(), /asked to wait \(429, or 503 with Retry-After\) 3 times, on 2 targets/)
        const row = (n: number) => tab.getByTestId('targets').locator('tbody tr', { hasText: userIdOf(n) })
        assert.match(await row(1).innerText(), /rate limited 2×/)
        assert.match(await row(2).innerText(), /rate limited 1×/)
        assert.doesNotMatch(await row(3).innerText(), /rate limited/)
        await tab.context().close()
      } finally {
        await fx.close()
        await upstream.close()
      }
    })
})

import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { assertAnswered, callTool, connectStdio, type McpWorld, startMcpWorld, text } from './support.js'

/**
 * `warrant mcp` over stdio serves no review pages, yet `propose_change` handed the agent a review link on the
 * config's server host/port ("Give the person the review page http://127.0.0.1:<port>/review/plans/…") as if it
 * worked, though nothing listened there. Now: with `server.public_url`, that link; without it, review_url is null
 * and review_hint says, as data and in the tool's text, that the plan is reviewed on the review pages of a
 * `warrant serve` on this config's store, naming the command and the address it would serve it at.
 */

/** A loopback port nothing listens on (taken from the system, then let go). */
async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

describe('MCP over stdio: the review link is one that is served, or a plain hint', () => {
  let world: McpWorld
  let port: number
  before(async () => {
    port = await freePort()
    world = await startMcpWorld({ count: 300, edit: (config) => void (config.server = { ...config.server, port }) })
  })
  after(async () => {
    await world?.close()
  })

  async function propose(client: Client, region: string) {
    const selection = assertAnswered(await callTool(client, 'create_selection', { resource: 'subscriptions', filter: { status: 'past_due', region } }))
    return callTool(client, 'propose_change', { selection_id: selection.selection_id, action: { type: 'pause_collection', params: { reason: `review link ${region}` } } })
  }

  test('no server.public_url and no server here: review_url null, review_hint names warrant serve and where it would serve the plan', { timeout: 120_000 }, async () => {
    const { client } = await connectStdio(world, world.agentToken)
    try {
      const proposed = await propose(client, 'eu')
      const plan = assertAnswered(proposed)
      const wouldBe = `http://127.0.0.1:${port}/review/plans/${plan.plan_id}`
      // the premise: nothing serves the address the config names
      await assert.rejects(fetch(wouldBe), 'nothing listens on the configured address')
      assert.equal(plan.review_url, null, 'no link that nobody serves')
      assert.equal(typeof plan.review_hint, 'string')
      assert.match(plan.review_hint, /warrant serve/)
      assert.match(plan.review_hint, /server\.public_url/)
      assert.ok(plan.review_hint.includes(wouldBe), `the hint names where warrant serve on this config would show it: ${plan.review_hint}`)
      const summary = text(proposed)
      assert.doesNotMatch(summary, /Give the person the review page http/, 'the text hands out no link as if it worked')
      assert.ok(summary.includes(plan.review_hint), `the text says the hint: ${summary}`)
      // get_plan says the same
      const read = assertAnswered(await callTool(client, 'get_plan', { plan_id: plan.plan_id }))
      assert.equal(read.review_url, null)
      assert.equal(read.review_hint, plan.review_hint)
    } finally {
      await client.close()
    }
  })

  test('with server.public_url: that link, and no hint', { timeout: 120_000 }, async () => {
    const raw = JSON.parse(readFileSync(world.configPath, 'utf8'))
    raw.server = { ...raw.server, public_url: 'https://warrant.example.test/' }
    const configPath = join(world.fx.dir, 'warrant-public.json')
    writeFileSync(configPath, JSON.stringify(raw, null, 2))
    const { client } = await connectStdio({ ...world, configPath }, world.agentToken)
    try {
      const proposed = await propose(client, 'us')
      const plan = assertAnswered(proposed)
      const link = `https://warrant.example.test/review/plans/${plan.plan_id}`
      assert.equal(plan.review_url, link)
      assert.equal(plan.review_hint, null)
      assert.ok(text(proposed).includes(`review page ${link} `), text(proposed))
    } finally {
      await client.close()
    }
  })
})

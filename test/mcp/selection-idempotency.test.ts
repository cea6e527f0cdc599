import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { type McpWorld, assertAnswered, assertRefused, callTool, connectStdio, startMcpWorld, text } from './support.js'

const ARGS = { resource: 'subscriptions', filter: { status: 'past_due', region: 'eu' }, exclude: [{ rule: 'disputed', filter: { tags: { contains: 'disputed' } } }] }

/**
 * create_selection takes an optional idempotency_key, the same key as POST …/selections' Idempotency-Key header:
 * an agent retrying a call whose answer it lost gets the selection that call froze, not a second one. Before, the
 * tool refused the argument (strict input), and every retry walked again and froze another selection.
 * Driven by the official MCP client against `warrant mcp` as a real subprocess.
 */
describe('create_selection with an idempotency_key (official client, warrant mcp subprocess)', () => {
  let world: McpWorld
  let session: Awaited<ReturnType<typeof connectStdio>>
  const selections = async () => Number((await world.fx.gateway.store.db.selectFrom('selections').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n)
  before(async () => {
    world = await startMcpWorld({ count: 400 })
    session = await connectStdio(world, world.agentToken)
  })
  after(async () => {
    await session?.client.close()
    await world?.close()
  })

  test('tools/list: idempotency_key is an optional argument', async () => {
    const { tools } = await session.client.listTools()
    const tool = tools.find((t) => t.name === 'create_selection')!
    assert.ok('idempotency_key' in (tool.inputSchema.properties ?? {}))
    assert.ok(!(tool.inputSchema.required ?? []).includes('idempotency_key'))
  })

  test('the same key and arguments: the same selection, said to be handed back; the HTTP header names it too', async () => {
    const key = randomUUID()
    const first = assertAnswered(await callTool(session.client, 'create_selection', { ...ARGS, idempotency_key: key }))
    assert.equal(first.created, true)
    const count = await selections()
    const again = await callTool(session.client, 'create_selection', { ...ARGS, idempotency_key: key })
    const replay = assertAnswered(again)
    assert.equal(replay.created, false)
    assert.equal(replay.selection_id, first.selection_id)
    assert.equal(replay.digest, first.digest)
    assert.match(text(again), /^ALREADY CREATED with this idempotency_key: nothing was walked again/)
    assert.match(text(again), /COMPLETE: selection sel_/)
    // one key per principal, whatever the surface
    const { resource, ...body } = ARGS
    const http = await fetch(`${world.fx.base}/v1/resources/${resource}/selections`, {
      method: 'POST',
      headers: { authorization: `Bearer ${world.agentToken}`, 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify(body),
    })
    assert.equal(http.status, 200)
    assert.equal(((await http.json()) as any).selection_id, first.selection_id)
    assert.equal(await selections(), count, 'nothing new')
  })

  test('the same key with other arguments: idempotency_key_reused naming the key, nothing created', async () => {
    const key = randomUUID()
    assertAnswered(await callTool(session.client, 'create_selection', { ...ARGS, idempotency_key: key }))
    const count = await selections()
    const refused = await callTool(session.client, 'create_selection', { ...ARGS, filter: { status: 'past_due', region: 'us' }, idempotency_key: key })
    assertRefused(refused, 'idempotency_key_reused')
    assert.ok(refused.structuredContent.error.message.includes(key))
    assert.match(text(refused), /Use a new key for a new commit or selection/)
    assert.equal(await selections(), count)
  })

  test('a bad key is refused naming idempotency_key; nothing created', async () => {
    const count = await selections()
    for (const key of ['', '   ', 'a\u0000b', 'k'.repeat(256)]) {
      const refused = await callTool(session.client, 'create_selection', { ...ARGS, idempotency_key: key })
      assertRefused(refused, 'invalid_request')
      assert.match(refused.structuredContent.error.message, /idempotency_key/, JSON.stringify(key))
    }
    assert.equal(await selections(), count)
  })

  test("another principal's equal key: its own selection", async () => {
    const key = randomUUID()
    const mine = assertAnswered(await callTool(session.client, 'create_selection', { ...ARGS, idempotency_key: key }))
    const other = await world.fx.gateway.principals.issue({ name: 'mcp-agent-2', role: 'agent', scopes: { resources: ['subscriptions'], actions: ['pause_collection'] } })
    const theirs = await connectStdio(world, other.token)
    try {
      const answer = assertAnswered(await callTool(theirs.client, 'create_selection', { ...ARGS, idempotency_key: key }))
      assert.equal(answer.created, true)
      assert.notEqual(answer.selection_id, mine.selection_id)
    } finally {
      await theirs.client.close()
    }
  })

  test('two calls at once with one key: one selection', async () => {
    const key = randomUUID()
    const count = await selections()
    const answers = await Promise.all([0, 1].map(() => callTool(session.client, 'create_selection', { ...ARGS, page_size: 10, idempotency_key: key })))
    const ids = new Set<string>()
    for (const a of answers) {
      if (a.isError) assertRefused(a, 'idempotency_in_progress')
      else ids.add(assertAnswered(a).selection_id)
    }
    assert.equal(ids.size, 1, JSON.stringify(answers.map((a) => a.structuredContent?.error?.code ?? a.structuredContent?.selection_id)))
    assert.equal(await selections(), count + 1)
    assert.deepEqual(answers.filter((a) => !a.isError && a.structuredContent.created).length, 1, 'one call created it')
  })
})

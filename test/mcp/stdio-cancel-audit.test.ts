import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { sendJson, startUpstream, type TestUpstream } from '../connectors/http/upstream-server.js'
import { type McpWorld, startMcpLineSession, startSlowDocsWorld } from './support.js'

/**
 * A request the client cancels over stdio (`notifications/cancelled` naming its id) gets no answer from the SDK, so the
 * trail kept it in flight for ever: a leak per cancelled request, its id reused later marked `id_in_flight_twice`
 * (and a request not a tool call's left no row at all). A cancelled request is one `client_closed` row saying the
 * client cancelled it (a tool call's: its tool was started, and its own `mcp:TOOL` row says what it did: stopped at the
 * cancel, `client_closed` too); a
 * cancellation naming no request in flight drops nothing; a row says `ok` only for a request the client was answered.
 */

const search = (id: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'search', arguments: { resource: 'slowdocs', filter: {} } } })
const cancel = (requestId: number, reason = 'the user stopped it') => JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason } })

describe('MCP over stdio: a request the client cancels', () => {
  let world: McpWorld
  let upstream: TestUpstream
  let token: string
  /** the upstream's list answers once released, so a search waits there for as long as the test wants */
  let release: () => void = () => undefined
  let gate = Promise.resolve()
  const hold = () => (gate = new Promise<void>((resolve) => (release = resolve)))

  before(async () => {
    upstream = await startUpstream(async (req, res) => {
      await gate
      if (req.url.pathname === '/docs') return sendJson(res, 200, { data: [{ id: 'd1', state: 'open', rev: 1 }], next: null })
      sendJson(res, 404, { error: 'no such list' })
    })
    world = await startSlowDocsWorld(upstream.origin)
    token = (await world.fx.gateway.principals.issue({ name: 'cancel-agent', role: 'agent', scopes: { resources: ['slowdocs'], actions: '*' } })).token
  })
  after(async () => {
    release()
    await world?.close()
    await upstream?.close()
  })

  const lastSeq = async () => Number((await world.fx.gateway.store.db.selectFrom('audit_events').select((eb) => eb.fn.max('seq').as('m')).executeTakeFirst())?.m ?? 0)
  const rowsAfter = async (seq: number) =>
    (await world.fx.gateway.store.db.selectFrom('audit_events').selectAll().where('seq', '>', seq).where('surface', '=', 'mcp').orderBy('seq').execute()).map((r) => ({ ...r, summary: JSON.parse(r.summary) }))
  const until = async (what: () => boolean | Promise<boolean>) => {
    while (!(await what())) await new Promise((resolve) => setTimeout(resolve, 20))
  }

  test('a slow tool call cancelled: one client_closed row saying so, its tool row; its id reused: a normal row; an unknown id cancelled: nothing lost', { timeout: 90_000 }, async () => {
    const startSeq = await lastSeq()
    const session = await startMcpLineSession({ ...world, agentToken: token })
    try {
      hold()
      const asked = upstream.seen.length
      session.send(search(20))
      await until(() => upstream.seen.length > asked) // the tool is at the upstream
      session.send(cancel(20))
      await until(async () => (await rowsAfter(startSeq)).some((r) => r.summary.method === 'notifications/cancelled'))
      release()
      await until(async () => (await rowsAfter(startSeq)).some((r) => r.action === 'mcp:search'))
      // the id reused, once the first is done with
      session.send(JSON.stringify({ jsonrpc: '2.0', id: 20, method: 'tools/list' }))
      await session.answer(20)
      // a cancellation naming an id in flight nowhere, while a search is: the search is answered, and recorded so
      hold()
      const before = upstream.seen.length
      session.send(search(21))
      await until(() => upstream.seen.length > before)
      session.send(cancel(99))
      session.send(cancel(0))
      await new Promise((resolve) => setTimeout(resolve, 200))
      release()
      assert.equal((await session.answer(21)).result?.isError ?? false, false)
      session.send(JSON.stringify({ jsonrpc: '2.0', id: 22, method: 'ping' }))
      await session.answer(22)
    } finally {
      release()
      await session.end()
    }
    await world.fx.gateway.audit.flush()
    assert.equal(session.lines.filter((l) => l.id === 20).length, 1, 'the cancelled call got no answer, the tools/list under its id one')
    const rows = (await rowsAfter(startSeq)).slice(2) // initialize and its notification
    const seen = rows.map((r) => [r.action, r.summary.outcome, r.summary.body?.id ?? r.summary.body?.params?.requestId ?? null, r.summary.id_in_flight_twice ?? false])
    assert.deepEqual(
      seen,
      [
        ['stdio:notifications/cancelled', 'ok', 20, false],
        ['stdio:tools/call', 'client_closed', 20, false],
        ['mcp:search', 'client_closed', null, false],
        ['stdio:tools/list', 'ok', 20, false],
        ['stdio:notifications/cancelled', 'ok', 99, false],
        ['stdio:notifications/cancelled', 'ok', 0, false],
        ['mcp:search', 'ok', null, false],
        ['stdio:ping', 'ok', 22, false],
      ],
      JSON.stringify(rows.map((r) => [r.action, r.summary])),
    )
    const cancelled = rows[1]!.summary
    assert.deepEqual(cancelled.cancelled, { by: 'client', reason: 'the user stopped it' })
    assert.equal(cancelled.tool_started, true, 'its tool was started: its own row says what it did')
    assert.equal(cancelled.error, undefined, 'no refusal: the client withdrew it')
    assert.equal(cancelled.body.params.name, 'search')
    // the tool's own row: it stopped at the cancel, with the page in flight abandoned (it had read none)
    const tool = rows[2]!.summary
    assert.deepEqual([tool.cancelled, tool.tool_finished, tool.walk, tool.error], [{ by: 'client', reason: 'the user stopped it' }, false, { pages_read: 0, stopped_early: true }, undefined], JSON.stringify(tool))
  })

  test('a request outside a tool cancelled at once: its row says ok exactly when the client was answered, else client_closed', { timeout: 60_000 }, async () => {
    const startSeq = await lastSeq()
    const session = await startMcpLineSession({ ...world, agentToken: token })
    try {
      // in one write, and one line at a time: the SDK answers or drops it, as the race goes
      session.send(`${JSON.stringify({ jsonrpc: '2.0', id: 30, method: 'tools/list' })}\n${cancel(30)}`)
      session.send(JSON.stringify({ jsonrpc: '2.0', id: 31, method: 'ping' }))
      session.send(cancel(31))
      // a task-augmented tool call, which the SDK refuses before any tool runs (this server runs no tasks)
      session.send(`${JSON.stringify({ jsonrpc: '2.0', id: 33, method: 'tools/call', params: { name: 'list_resources', arguments: {}, task: { ttl: 1000 } } })}\n${cancel(33)}`)
      session.send(JSON.stringify({ jsonrpc: '2.0', id: 32, method: 'ping' }))
      await session.answer(32)
    } finally {
      await session.end()
    }
    await world.fx.gateway.audit.flush()
    const rows = (await rowsAfter(startSeq)).slice(2)
    for (const id of [30, 31]) {
      const row = rows.filter((r) => r.action !== 'stdio:notifications/cancelled' && r.summary.body?.id === id)
      assert.equal(row.length, 1, `one row for id ${id}: ${JSON.stringify(rows.map((r) => [r.action, r.summary]))}`)
      const answered = session.lines.some((l) => l.id === id)
      assert.equal(row[0]!.summary.outcome, answered ? 'ok' : 'client_closed', `id ${id} answered: ${answered}`)
      if (!answered) assert.equal(row[0]!.summary.cancelled?.by, 'client')
    }
    // the task-augmented call: no tool ran, and no row says one started
    assert.ok(!rows.some((r) => r.action.startsWith('mcp:')), JSON.stringify(rows.map((r) => [r.action, r.summary])))
    const task = rows.filter((r) => r.action === 'stdio:tools/call' && r.summary.body?.id === 33)
    assert.equal(task.length, 1, JSON.stringify(rows.map((r) => [r.action, r.summary])))
    assert.notEqual(task[0]!.summary.tool_started, true, JSON.stringify(task[0]!.summary))
    assert.equal(task[0]!.summary.outcome, session.lines.some((l) => l.id === 33) ? 'refused' : 'client_closed')
  })
})

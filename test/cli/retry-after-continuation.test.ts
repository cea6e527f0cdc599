import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createHttpItemsWorkspace } from '../support/cli-http-workspace.js'
import { collection } from '../connectors/http/fixtures.js'
import { sendJson } from '../connectors/http/upstream-server.js'

// the resource declares id, status and version only
const ITEMS = collection(10).map(({ id, status, version }) => ({ id, status, version }))

/**
 * A walk stopped by a 429 ends with a `retry_after` continuation that carries a cursor. `warrant search` printed
 * two instructions for it: "Continue after <time> (Ns):" and then, from the branch meant for `next_cursor`,
 * "Continue the same walk with:", as if the walk could go on at once. One instruction says when, and with which
 * cursor.
 */
describe('warrant search: a retry_after continuation prints one instruction (http upstream answering 429)', () => {
  let ws: Awaited<ReturnType<typeof createHttpItemsWorkspace>>
  before(async () => {
    // the first page answers; the second is refused for the rate, with a wait of 7 s
    ws = await createHttpItemsWorkspace((req, res) => {
      if (req.url.pathname !== '/items') return sendJson(res, 404, { error: 'no' })
      if (req.url.searchParams.get('cursor') === null) return sendJson(res, 200, { items: ITEMS.slice(0, 5), next_cursor: '5' })
      sendJson(res, 429, { error: 'slow down' }, { 'retry-after': '7' })
    })
  })
  after(async () => {
    await ws?.drop()
  })

  test('one "Continue" line naming the time and the wait, then the command with the continuation\'s cursor', async () => {
    const json = await ws.warrant(['search', 'items', '--page-size', '5', '--json'])
    const envelope = JSON.parse(json.stdout)
    assert.equal(envelope.continuation?.kind, 'retry_after', json.stdout)
    assert.ok(envelope.continuation.cursor, 'the walk names a cursor to resume with')

    const r = await ws.warrant(['search', 'items', '--page-size', '5'])
    assert.equal(r.code, 5, `${r.stdout}\n${r.stderr}`)
    const lines = r.stdout.split('\n')
    const instructions = lines.filter((l) => /^Continue/.test(l))
    assert.equal(instructions.length, 1, `exactly one instruction, not:\n${instructions.join('\n')}`)
    const at = lines.indexOf(instructions[0]!)
    assert.match(instructions[0]!, /^Continue the same walk after \d{4}-\d\d-\d\dT\S+Z \(in 7s\) with:$/)
    // the same search: its page size and config carried (test/cli/continuation-commands.test.ts runs one as printed)
    assert.match(lines[at + 1]!, /^ {2}warrant search items --page-size 5 --cursor \S+ --config \S+$/)
  })
})

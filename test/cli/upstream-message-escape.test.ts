import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createHttpItemsWorkspace } from '../support/cli-http-workspace.js'
import { sendJson } from '../connectors/http/upstream-server.js'

/** An upstream's error body that would clear the screen and retitle the terminal. */
const HOSTILE = '\x1b[2Jwiped\x1b]0;pwned\x07 \u202eevil'

/**
 * The INCOMPLETE reasons and warnings of `warrant search` and `warrant select` quote what the upstream answered (a
 * 503's body, flattened to one line): its escape sequences reached the terminal as they came (`ESC[2J` clears the
 * screen, a bidirectional override reorders what follows). They are escaped as table cells are.
 */
describe('warrant search / select: an upstream error quoted in a reason is escaped (http upstream)', () => {
  let ws: Awaited<ReturnType<typeof createHttpItemsWorkspace>>
  before(async () => {
    ws = await createHttpItemsWorkspace((req, res) => {
      if (req.url.pathname === '/items') {
        res.writeHead(503, { 'content-type': 'text/plain' })
        res.end(HOSTILE)
        return
      }
      sendJson(res, 404, { error: 'no' })
    })
  })
  after(async () => {
    await ws?.drop()
  })

  for (const command of ['search', 'select']) {
    test(`warrant ${command}`, async () => {
      const r = await ws.warrant([command, 'items', ...(command === 'select' ? ['-q'] : [])])
      assert.equal(r.code, 5, `${r.stdout}\n${r.stderr}`)
      assert.match(r.stdout, /^INCOMPLETE/)
      assert.doesNotMatch(r.stdout, /[\x1b\x07\u202e]/, 'no escape sequence or override reaches the terminal')
      assert.match(r.stdout, /\\u001b\[2Jwiped\\u001b\]0;pwned\\u0007 \\u202eevil/, 'the upstream text is shown, escaped')
    })
  }
})

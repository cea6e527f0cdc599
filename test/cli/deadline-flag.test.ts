import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { SEARCH_MAX_DEADLINE_MS, SELECTION_MAX_DEADLINE_MS } from '../../src/contract/index.js'
import { createCliWorkspace, type CliWorkspace } from '../support/cli-config.js'

/**
 * `--deadline-ms` takes what the gateway call behind it takes (the contract's constants, as HTTP and MCP do), and a
 * longer one is refused naming the flag and its limit, before anything is walked. `select` refused it from inside
 * the selection request ("invalid selection request: budget.deadline_ms"), naming a key the command line has not.
 */
describe('--deadline-ms is held to the limit of the surface it feeds', () => {
  let ws: CliWorkspace
  before(async () => {
    ws = await createCliWorkspace({ count: 50 })
  })
  after(async () => {
    await ws?.drop()
  })

  for (const [command, max] of [
    ['search', SEARCH_MAX_DEADLINE_MS],
    ['select', SELECTION_MAX_DEADLINE_MS],
  ] as const) {
    test(`${command}: ${max + 1} is refused (exit 2) naming --deadline-ms and ${max}`, async () => {
      const refused = await ws.warrant([command, 'subscriptions', '-f', 'status=past_due', '--deadline-ms', String(max + 1)])
      assert.equal(refused.code, 2, refused.stderr)
      assert.match(refused.stderr, new RegExp(`--deadline-ms must be at most ${max}`))
      assert.doesNotMatch(refused.stderr, /selecting from|reading/, 'refused before anything was walked')
    })
  }
})

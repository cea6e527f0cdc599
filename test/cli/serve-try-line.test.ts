import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { after, before, describe, it } from 'node:test'
import { createCliWorkspace, serveUntil } from '../support/cli-config.js'

const run = promisify(execFile)

/**
 * `warrant serve` ends with a `Try:` curl. It searched `{"status":"past_due"}` whatever the config: on a resource
 * without a `status` field the first command a new user pastes answered `invalid_request: unknown field "status"`.
 * The line now names no field, so it runs on any config's first resource and answers an envelope.
 */
describe('warrant serve: the Try line runs on a config that is not the demo', () => {
  let ws: Awaited<ReturnType<typeof createCliWorkspace>>
  before(async () => {
    ws = await createCliWorkspace({
      count: 300,
      edit: (raw) => {
        // the demo table, declared as a resource without the demo's `status` field (nor anything that names it)
        const resource = raw.resources.subscriptions
        delete resource.fields.status
        resource.review_fields = resource.review_fields.filter((f: string) => f !== 'status')
        resource.group_by = resource.group_by.filter((f: string) => f !== 'status')
        delete resource.standing_approvals
        delete resource.actions.pause_collection
        raw.resources = { accounts: resource }
      },
    })
  })
  after(async () => {
    await ws?.drop()
  })

  it('pasted as printed on a fresh store, answers a one-page envelope, not an unknown field', { timeout: 120_000 }, async () => {
    const serve = await serveUntil(ws.configPath, ws.dir, (out) => /^Try: .*\n/m.test(out))
    try {
      const printed = serve.printed
      const tryLine = /^Try: (.*)$/m.exec(printed)![1]!
      assert.match(tryLine, /\/v1\/resources\/accounts\/search/)
      const { stdout } = await run('bash', ['-c', tryLine], { cwd: ws.dir, env: { PATH: process.env.PATH ?? '' } })
      const answer = JSON.parse(stdout) as { error?: unknown; complete?: boolean; items?: unknown[] }
      assert.equal(answer.error, undefined, `${tryLine}\n${stdout.slice(0, 500)}`)
      // 300 records, one page of 100: the page says it is not all of them
      assert.equal(answer.complete, false, stdout.slice(0, 500))
      assert.ok(Array.isArray(answer.items) && answer.items.length > 0, stdout.slice(0, 500))
    } finally {
      await serve.stop()
    }
  })
})

import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createCliWorkspace } from '../support/cli-config.js'

/**
 * A number the option's parser accepts but the request cannot hold was a bug report (exit 1, "internal error",
 * zod's issue list or "Invalid time value"), never the input error it is: exit 2 with a sentence naming the flag
 * and its bound.
 */
describe('out-of-range option values are input errors naming the flag (sqlite)', () => {
  let ws: Awaited<ReturnType<typeof createCliWorkspace>>
  before(async () => {
    ws = await createCliWorkspace({ count: 50 })
  })
  after(async () => {
    await ws?.drop()
  })

  for (const [flag, value, bound] of [
    ['--page-size', '1000000', '1000'],
    ['--max-items', '100000000', '1000000'],
    ['--max-pages', '100000000000', '100000'],
    ['--deadline-ms', '100000000000', '300000'],
  ] as const)
    test(`warrant search ${flag} ${value}`, async () => {
      const r = await ws.warrant(['search', 'subscriptions', flag, value])
      assert.equal(r.code, 2, r.stderr)
      assert.match(r.stderr, new RegExp(`^warrant: invalid_request: ${flag}\\b.*${bound}`))
      assert.doesNotMatch(r.stderr, /internal error/)
    })

  for (const days of ['1e12', 'Infinity'])
    test(`warrant token create --ttl-days ${days}`, async () => {
      const r = await ws.warrant(['token', 'create', '--role', 'agent', '--name', `ttl-${days}`, '--ttl-days', days])
      assert.equal(r.code, 2, r.stderr)
      assert.match(r.stderr, /^warrant: invalid_request: --ttl-days /)
    })
})

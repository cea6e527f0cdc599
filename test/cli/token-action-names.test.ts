import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { type CliWorkspace, createCliWorkspace } from '../support/cli-config.js'

/**
 * `warrant token create --resources nosuch` is refused (not_found), but `--actions` took any word: a typo
 * (`pause_colection`) made an agent token that may run no action, exit 0, and the agent's every plan was then
 * refused as forbidden, far from the mistake. An action named in `--actions` (or `resource.action`) must be one of
 * an in-scope resource's actions; the refusal names it and lists those that exist; nothing is created.
 */
describe('warrant token create --actions: an action no resource has is refused (real process, sqlite)', () => {
  let ws: CliWorkspace
  before(async () => {
    ws = await createCliWorkspace({ count: 5 })
  })
  after(async () => {
    await ws?.drop()
  })

  for (const actions of ['pause_colection', 'pause_collection,resume_colection', 'nosuch.pause_collection', 'subscriptions.nosuch'])
    test(`--actions ${actions}`, { timeout: 60_000 }, async () => {
      const r = await ws.warrant(['token', 'create', '--role', 'agent', '--name', `bot-${actions.length}-${actions.charCodeAt(4)}`, '--actions', actions, '--json'])
      assert.equal(r.code, 2, `${r.stdout}\n${r.stderr}`)
      assert.equal(r.stdout, '')
      assert.match(r.stderr, /invalid_request: --actions: .*(no resource|not an action).*pause_collection/, r.stderr)
      const listed = await ws.warrant(['token', 'list'])
      assert.doesNotMatch(listed.stdout, /bot-/, 'nothing was created')
    })

  test('actions that exist are taken, bare and as resource.action', { timeout: 60_000 }, async () => {
    const r = await ws.warrant(['token', 'create', '--role', 'agent', '--name', 'good-bot', '--actions', 'pause_collection,subscriptions.resume_collection', '--json'])
    assert.equal(r.code, 0, r.stderr)
    assert.deepEqual(JSON.parse(r.stdout).scopes.actions, ['pause_collection', 'subscriptions.resume_collection'])
  })
})

import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { loadConfigFile } from '../../src/config/index.js'
import { createPrincipalStore } from '../../src/auth/index.js'
import { createStore } from '../../src/store/index.js'
import { createCliWorkspace } from '../support/cli-config.js'

describe('warrant token (a real subprocess)', () => {
  let ws: Awaited<ReturnType<typeof createCliWorkspace>>
  before(async () => {
    ws = await createCliWorkspace({ count: 200 })
  })
  after(async () => {
    await ws?.drop()
  })

  test('create → list → revoke; the token works until it is revoked, and is never listed', async () => {
    const created = await ws.warrant(['token', 'create', '--role', 'agent', '--name', 'ci-agent', '--resources', 'subscriptions', '--actions', 'pause_collection', '--json'])
    assert.equal(created.code, 0, created.stderr)
    const issued = JSON.parse(created.stdout)
    assert.deepEqual(issued.scopes, { resources: ['subscriptions'], actions: ['pause_collection'] })
    assert.match(issued.token, /^wrt_agent_/)

    const store = await createStore({ url: loadConfigFile(ws.configPath).store })
    const principals = createPrincipalStore(store)
    try {
      const actor = await principals.authenticate(issued.token, 'cli')
      assert.equal(actor.role, 'agent')
      const listed = await ws.warrant(['token', 'list'])
      assert.equal(listed.code, 0)
      assert.match(listed.stdout, new RegExp(issued.token_id))
      assert.ok(!listed.stdout.includes(issued.token), 'a token value is never listed')
      const revoked = await ws.warrant(['token', 'revoke', issued.token_id])
      assert.equal(revoked.code, 0, revoked.stderr)
      await assert.rejects(principals.authenticate(issued.token, 'cli'), /unknown, expired or revoked/)
      const again = await ws.warrant(['token', 'revoke', issued.token_id])
      assert.equal(again.code, 2)
      assert.match(again.stderr, /not_found/)
    } finally {
      await store.close()
    }
  })

  test('bad input is refused with a sentence and exit code 2', async () => {
    const role = await ws.warrant(['token', 'create', '--role', 'root'])
    assert.equal(role.code, 2)
    assert.match(role.stderr, /--role must be one of agent, reviewer, admin/)
    const resource = await ws.warrant(['token', 'create', '--role', 'agent', '--resources', 'nope'])
    assert.equal(resource.code, 2)
    assert.match(resource.stderr, /unknown resource "nope"/)
  })
})

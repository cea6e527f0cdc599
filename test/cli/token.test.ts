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

    const store = await createStore({ url: loadConfigFile(ws.configPath).store.url })
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
    const resource = await ws.warrant(['token', 'create', '--role', 'agent', '--name', 'nope-agent', '--resources', 'nope'])
    assert.equal(resource.code, 2)
    assert.match(resource.stderr, /unknown resource "nope"/)
    const nameless = await ws.warrant(['token', 'create', '--role', 'reviewer'])
    assert.equal(nameless.code, 2)
    assert.match(nameless.stderr, /--name is required: the person or service the new principal is \(or --principal NAME/)
  })

  test('a principal is created once: a second --name rev1 is refused (exit 3); --principal rev1 adds a token to the same principal', async () => {
    const first = await ws.warrant(['token', 'create', '--role', 'reviewer', '--name', 'rev1', '--json'])
    assert.equal(first.code, 0, first.stderr)
    const again = await ws.warrant(['token', 'create', '--role', 'reviewer', '--name', 'rev1', '--json'])
    assert.equal(again.code, 3, again.stderr)
    assert.equal(again.stdout, '', 'no token is printed')
    assert.match(again.stderr, /conflict: a principal named "rev1" already exists; to give it another token, use --principal rev1/)

    const added = await ws.warrant(['token', 'create', '--principal', 'rev1', '--json'])
    assert.equal(added.code, 0, added.stderr)
    const [a, b] = [JSON.parse(first.stdout), JSON.parse(added.stdout)]
    assert.equal(b.principal_id, a.principal_id)
    assert.equal(b.role, 'reviewer')
    assert.notEqual(b.token_id, a.token_id)

    const widened = await ws.warrant(['token', 'create', '--principal', 'rev1', '--role', 'admin'])
    assert.equal(widened.code, 2)
    assert.match(widened.stderr, /--principal adds a token to an existing principal, whose role and scopes stand: drop --role/)
    const unknown = await ws.warrant(['token', 'create', '--principal', 'nobody'])
    assert.equal(unknown.code, 2)
    assert.match(unknown.stderr, /no principal named "nobody"; create it with --name nobody --role ROLE/)

    const listed = await ws.warrant(['token', 'list'])
    for (const id of [a.token_id, b.token_id]) assert.match(listed.stdout, new RegExp(`${id} +reviewer +principal=rev1 `))
  })
})

import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { startDemoGateway } from '../support/gateway-fixture.js'
import { STORE_KINDS } from '../support/stores.js'
import { sendJson, startUpstream } from '../connectors/http/upstream-server.js'
import { caller } from '../operations/support/flow.js'
import { usersResourceConfig } from '../operations/support/users-upstream.js'

/**
 * A resource versioned by ETag (`version.from: etag`) over an upstream whose list gives no per-item ETag (each
 * record read alone carries one). The selection froze every member at version "" and said complete and
 * committable; the operation then halted `membership_changed` on the first member, "is at version "v1", not the
 * the selection froze": a record nobody changed, and a plan that could never commit. A member whose version the
 * list does not give is not frozen: the selection says not complete, naming the missing ETag and the fix.
 */
for (const kind of STORE_KINDS) {
  describe(`an ETag-versioned list without per-item ETags (${kind} store)`, () => {
    test('the selection freezes no member at version "": not complete, the reason names the ETag and the config fix', async () => {
      const users = new Map([1, 2, 3].map((i) => [`u${i}`, { id: `u${i}`, name: `User ${i}`, role: 'member', status: 'active' }]))
      const upstream = await startUpstream((req, res) => {
        if (req.method === 'GET' && req.url.pathname === '/users') return sendJson(res, 200, { items: [...users.values()], next_cursor: null })
        const user = users.get(req.url.pathname.slice('/users/'.length))
        if (!user) return sendJson(res, 404, {})
        if (req.method === 'GET') return sendJson(res, 200, user, { etag: '"v1"' })
        if (req.headers['if-match'] !== '"v1"') return sendJson(res, 412, {})
        user.role = (JSON.parse(req.body) as { role: string }).role
        return sendJson(res, 200, user, { etag: '"v2"' })
      })
      const fx = await startDemoGateway({
        store: kind,
        count: 10,
        edit: (config) => {
          const { version_field: _, ...users } = usersResourceConfig(upstream.origin) as { version_field: string; connector: object }
          config.resources.users = { ...users, connector: { ...users.connector, version: { from: 'etag' } }, fields: { id: 'string', name: 'string', role: 'string', status: 'string' } }
        },
      })
      try {
        const token = (await fx.gateway.principals.issue({ name: 'users-agent', role: 'agent', scopes: { resources: ['users'], actions: ['set_role'] } })).token
        const agent = caller(fx.base, token)
        const selection = await agent('POST', '/v1/resources/users/selections', { filter: {} })
        assert.equal(selection.status, 201, JSON.stringify(selection.body))
        assert.ok(!selection.body.records.some((m: { version: string | null }) => m.version === ''), 'no member frozen at version ""')
        assert.equal(selection.body.complete, false, JSON.stringify(selection.body))
        assert.equal(selection.body.committable, false)
        const reason = selection.body.incomplete_reasons.find((r: { code: string }) => r.code === 'SHAPE_MISMATCH')
        assert.ok(reason, JSON.stringify(selection.body.incomplete_reasons))
        assert.equal(reason.record_count, 3)
        assert.match(reason.message, /3 record\(s\) of source "main" carry no version/)
        assert.match(reason.message, /ETag/)
        assert.match(reason.message, /connector\.version/)
        assert.doesNotMatch(reason.message, /declared field/, 'the ETag is no declared field')
      } finally {
        await fx.close()
        await upstream.close()
      }
    })
  })
}

import assert from 'node:assert/strict'
import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, test } from 'node:test'
import { checkResource } from '../../src/checks/index.js'
import { resourceSchema } from '../../src/config/schema.js'
import { createHttpConnector } from '../../src/connectors/http/index.js'
import { startDemoGateway } from '../support/gateway-fixture.js'
import { allResults, caller, selectProposeApprove, waitForOperation } from './support/flow.js'

// `connector.version` points at a field the upstream does NOT move on writes (here `rev`, constant per record; the
// same holds for `updated_at` with one-second resolution and two writes in a second), and the upstream enforces
// If-Match against it. If-Match on a version that never moves protects nothing: a change made by someone else
// between Warrant's re-read and its PATCH leaves `rev` as it was, the PATCH passes, the other write is
// overwritten. The target was recorded `succeeded`; a write seen after at the version it started from proves
// nothing now: `unknown` (effect_unverified) and the operation halts (SQL already refused exactly this).
// `warrant check`'s write probe can only see a stale version refused; it says it did not probe the rest.
interface User { id: string; name: string; role: string; status: string; rev: string }
const idOf = (i: number) => `usr_${String(i).padStart(4, '0')}`

async function startUpstream(count: number) {
  const users = new Map<string, User>()
  for (let i = 1; i <= count; i++) users.set(idOf(i), { id: idOf(i), name: `User ${i}`, role: 'member', status: 'active', rev: `rev-${i}` })
  const hooks: { beforeApply: (id: string) => void } = { beforeApply: () => undefined }
  const send = (res: ServerResponse, status: number, body: unknown) => {
    const text = JSON.stringify(body)
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
    res.end(text)
  }
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1')
      if (req.method === 'GET' && url.pathname === '/users') {
        const limit = Number(url.searchParams.get('limit') ?? 100)
        const after = url.searchParams.get('cursor') ?? ''
        const ids = [...users.keys()].sort().filter((id) => id > after)
        return send(res, 200, { items: ids.slice(0, limit).map((id) => users.get(id)), next_cursor: ids.length > limit ? ids[limit - 1] : null })
      }
      const id = decodeURIComponent(/^\/users\/([^/]+)$/.exec(url.pathname)?.[1] ?? '')
      if (!users.has(id)) return send(res, 404, { error: 'not found' })
      if (req.method === 'GET') return send(res, 200, users.get(id))
      if (req.method === 'PATCH') {
        hooks.beforeApply(id)
        const user = users.get(id)!
        if (req.headers['if-match'] !== user.rev) return send(res, 412, { error: 'rev changed' })
        const updated = { ...user, ...(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Partial<User>), id } // rev is never moved
        users.set(id, updated)
        return send(res, 200, updated)
      }
      send(res, 405, { error: 'method' })
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return { origin, users, hooks, close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()) }) }
}

const resource = (origin: string) => ({
  environment: { name: 'users-probe', host: origin },
  connector: {
    kind: 'http',
    sources: [{ name: 'main', base_url: origin }],
    timeout_ms: 5000,
    list: { path: '/users', page_size_param: 'limit', pagination: { style: 'cursor', param: 'cursor', next_cursor_path: 'next_cursor' }, items_path: 'items' },
    get: { path: '/users/{id}' },
    version: { from: 'field', field: 'rev' },
  },
  fields: { id: 'string', name: 'string', role: 'string', status: 'string', rev: 'string' },
  review_fields: ['id', 'name', 'role', 'status'],
  actions: {
    set_role: {
      params: { role: { type: 'string' } },
      set: { role: '{{params.role}}' },
      precondition: { status: 'active' },
      write: { method: 'PATCH', path: '/users/{id}', body: { role: '{{set.role}}' }, if_match: true },
      expect: { status: [200] },
    },
  },
})

describe('a version that does not move on writes (real loopback upstream, sqlite store)', () => {
  test('the write probe says it did not probe whether the version moves', async () => {
    const up = await startUpstream(5)
    try {
      const config = resourceSchema.parse(resource(up.origin))
      const report = await checkResource({ name: 'users', config, connector: createHttpConnector({ resource: config }), writeProbeId: idOf(1) })
      const probe = report.guarantees.find((g) => g.name === 'write_probe.set_role')!
      // it cannot, without a real write: it says what it did not probe
      assert.match(probe.detail, /Not probed: that the version moves on every write/)
    } finally {
      await up.close()
    }
  })

  test('a write whose version did not move, over a change made meanwhile, is not recorded succeeded', async () => {
    const up = await startUpstream(5)
    const fx = await startDemoGateway({ store: 'sqlite', count: 50, edit: (raw) => { raw.resources.users = resource(up.origin) } })
    try {
      const token = (await fx.gateway.principals.issue({ name: 'users-agent', role: 'agent', scopes: { resources: ['users'], actions: ['set_role'] } })).token
      const agent = caller(fx.base, token)
      const { selection } = await selectProposeApprove(agent, [fx.as('reviewer')], 'users', { filter: { status: 'active' } }, { type: 'set_role', role: 'viewer' })
      // someone else makes usr_0003 an admin between Warrant's re-read and its PATCH; `rev` stays as it was
      up.hooks.beforeApply = (id) => {
        if (id === idOf(3) && up.users.get(id)!.role === 'member') up.users.set(id, { ...up.users.get(id)!, role: 'admin' })
      }
      const commit = await agent('POST', '/v1/resources/users/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action: { type: 'set_role', role: 'viewer' } }, { 'idempotency-key': 'probe-rev' })
      assert.equal(commit.status, 202, JSON.stringify(commit.body))
      const operation = await waitForOperation(agent, commit.body.operation_id)
      const result = (await allResults(agent, commit.body.operation_id)).find((r) => r.id === idOf(3))
      assert.equal(up.users.get(idOf(3))!.role, 'viewer', 'the admin role set meanwhile was overwritten')
      assert.notEqual(result.outcome, 'succeeded', `target ${idOf(3)}: ${JSON.stringify(result)}; operation ${operation.state}`)
    } finally {
      await fx.close()
      await up.close()
    }
  })
})

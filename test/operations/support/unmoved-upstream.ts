import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * A users API whose version field (`rev`) never moves on writes, though it enforces If-Match against it: the
 * shape of an upstream whose "version" is a constant per record (or an `updated_at` of one-second resolution).
 * `hooks.beforeApply` runs as a PATCH arrives, before it is checked and applied (a change made meanwhile); an
 * answer it returns is sent instead, the write not applied (a lock of the upstream's own, finer than `rev`).
 */
export interface User { id: string; name: string; role: string; status: string; rev: string }
export const idOf = (i: number) => `usr_${String(i).padStart(4, '0')}`

export async function startUnmovedUpstream(count: number) {
  const users = new Map<string, User>()
  for (let i = 1; i <= count; i++) users.set(idOf(i), { id: idOf(i), name: `User ${i}`, role: 'member', status: 'active', rev: `rev-${i}` })
  const hooks: { beforeApply: (id: string) => { readonly status: number; readonly body: unknown } | void } = { beforeApply: () => undefined }
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
        const refusal = hooks.beforeApply(id)
        if (refusal) return send(res, refusal.status, refusal.body)
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

/** A `users` resource over this upstream: `set_role`, a conditional PATCH (If-Match on `rev`). */
export const unmovedUsersResource = (origin: string) => ({
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

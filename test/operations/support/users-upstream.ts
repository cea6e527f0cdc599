import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface User {
  id: string
  name: string
  role: string
  status: string
  version: number
}

/** What the upstream does with one PATCH, decided per write (`n` counts every PATCH received, from 1). */
export interface WriteDecision {
  /** answer this role instead of the one asked for (and store it: a deployment defaulting to admin) */
  readonly roleOverride?: string
  readonly delayMs?: number
  /** hold the request (accepted, not answered, not applied) until this settles; then apply it as usual */
  readonly hold?: Promise<unknown>
  /** answer 202 Accepted at once, with an empty body, and apply the write only once this settles (a job queue) */
  readonly accept?: Promise<unknown>
  /** apply the write, answer its status and headers (Content-Length whole), then reset after this many body bytes */
  readonly cutAfter?: number
  /** reset the connection on the write, received whole, without applying or answering it */
  readonly reset?: boolean
  /**
   * answer this status and body without applying the write; `changedBy`: another writer's change lands first
   * (the user takes these fields and moves to the next version), as with an optimistic lock a 409 refuses
   */
  readonly refuse?: { readonly status: number; readonly body: unknown; readonly changedBy?: Partial<User>; readonly headers?: Readonly<Record<string, string>> }
}

/**
 * A REST users API on 127.0.0.1: cursor-paged list, get by id and by ids (`?ids=a,b`), PATCH with If-Match on the `version` field.
 * It counts every PATCH it receives per id, as an auditor of the gateway would.
 */
export interface UsersUpstream {
  readonly origin: string
  readonly users: Map<string, User>
  /** PATCHes received per id */
  readonly writes: Map<string, number>
  /** every PATCH received, in arrival order */
  readonly writeLog: string[]
  totalWrites(): number
  /** GETs of one user by id received */
  readsById(): number
  /** GETs of several users by id (`GET /users?ids=a,b`) received */
  batchReads(): number
  onWrite: (id: string, n: number) => WriteDecision | void
  /** called on each GET of one user by id (`n` counts them, from 1), before it is answered; a promise it returns holds the answer until it settles (a slow read) */
  onRead: (id: string, n: number) => void | Promise<unknown>
  /** false: every answer says `Connection: close`, so no connection is kept alive for a later request */
  keepAlive: boolean
  /** PATCHes that came on a connection that had carried an earlier request (a kept-alive one) */
  reusedWrites(): number
  /** Stops accepting connections (the port then refuses them); those already open go on. */
  stopListening(): void
  close(): Promise<void>
}

/** One page of the users list: `limit` (at most 500) users in id order after `cursor`, and the next cursor. */
export function usersPage(users: ReadonlyMap<string, User>, url: URL): { items: User[]; next_cursor: string | null } {
  const limit = Math.min(Number(url.searchParams.get('limit') ?? 100), 500)
  const after = url.searchParams.get('cursor') ?? ''
  const ids = [...users.keys()].sort().filter((id) => id > after)
  return { items: ids.slice(0, limit).map((id) => users.get(id)!), next_cursor: ids.length > limit ? ids[limit - 1]! : null }
}

export const userIdOf = (i: number) => `usr_${String(i).padStart(4, '0')}`

export async function startUsersUpstream(count: number): Promise<UsersUpstream> {
  const users = new Map<string, User>()
  for (let i = 1; i <= count; i++) users.set(userIdOf(i), { id: userIdOf(i), name: `User ${i}`, role: 'member', status: 'active', version: 1 })
  const writes = new Map<string, number>()
  const writeLog: string[] = []
  let readsById = 0
  let batchReads = 0
  let reusedWrites = 0
  const state: Pick<UsersUpstream, 'onWrite' | 'onRead' | 'keepAlive'> = { onWrite: () => undefined, onRead: () => undefined, keepAlive: true }
  // requests each connection carried: one that carries a second was kept alive and reused
  const carried = new WeakMap<object, number>()

  const send = (res: ServerResponse, status: number, body?: unknown, headers: Readonly<Record<string, string>> = {}) => {
    const text = body === undefined ? '' : JSON.stringify(body)
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...(state.keepAlive ? {} : { connection: 'close' }), ...headers })
    res.end(text)
  }
  const handle = async (req: IncomingMessage, body: string, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1')
    if (req.method === 'GET' && url.pathname === '/users' && url.searchParams.has('ids')) {
      // several users by id: those that exist, in the order asked (`get.batch` in usersResourceConfig's batched variant)
      batchReads += 1
      const items = url.searchParams.get('ids')!.split(',').flatMap((id) => (users.has(id) ? [users.get(id)] : []))
      return send(res, 200, { items })
    }
    if (req.method === 'GET' && url.pathname === '/users') return send(res, 200, usersPage(users, url))
    const match = /^\/users\/([^/]+)$/.exec(url.pathname)
    if (!match) return send(res, 404, { error: 'no route' })
    const id = decodeURIComponent(match[1]!)
    if (req.method === 'GET') {
      readsById += 1
      await state.onRead(id, readsById)
      const user = users.get(id)
      return user ? send(res, 200, user) : send(res, 404, { error: 'not found' })
    }
    if (req.method === 'PATCH') {
      const n = writeLog.push(id)
      writes.set(id, (writes.get(id) ?? 0) + 1)
      const decision = state.onWrite(id, n) ?? {}
      if ((carried.get(req.socket) ?? 0) > 1) reusedWrites += 1
      if (decision.reset) return void req.socket.destroy()
      if (decision.refuse) {
        const user = users.get(id)
        if (user && decision.refuse.changedBy) users.set(id, { ...user, ...decision.refuse.changedBy, id, version: user.version + 1 })
        return send(res, decision.refuse.status, decision.refuse.body, decision.refuse.headers)
      }
      if (decision.delayMs) await new Promise((r) => setTimeout(r, decision.delayMs))
      if (decision.hold) await decision.hold
      const apply = (): [number, unknown] => {
        const user = users.get(id)
        if (!user) return [404, { error: 'not found' }]
        if (req.headers['if-match'] !== String(user.version)) return [412, { error: 'version changed' }]
        const patch = JSON.parse(body || '{}') as Partial<User>
        const updated = { ...user, ...patch, ...(decision.roleOverride ? { role: decision.roleOverride } : {}), id, version: user.version + 1 }
        users.set(id, updated)
        return [200, updated]
      }
      if (decision.accept) {
        send(res, 202)
        await decision.accept
        apply()
        return
      }
      const [status, answer] = apply()
      if (decision.cutAfter !== undefined) {
        const text = JSON.stringify(answer)
        res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
        res.write(text.slice(0, decision.cutAfter), () => setTimeout(() => res.destroy(), 20))
        return
      }
      return send(res, status, answer)
    }
    return send(res, 405, { error: 'method not allowed' })
  }
  const server = createServer((req, res) => {
    carried.set(req.socket, (carried.get(req.socket) ?? 0) + 1)
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      handle(req, Buffer.concat(chunks).toString('utf8'), res).catch((error: unknown) => {
        if (!res.headersSent) send(res, 500, { error: String(error) })
      })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  return {
    origin: `http://127.0.0.1:${port}`,
    users,
    writes,
    writeLog,
    totalWrites: () => writeLog.length,
    readsById: () => readsById,
    batchReads: () => batchReads,
    get onWrite() {
      return state.onWrite
    },
    set onWrite(fn) {
      state.onWrite = fn
    },
    get onRead() {
      return state.onRead
    },
    set onRead(fn) {
      state.onRead = fn
    },
    get keepAlive() {
      return state.keepAlive
    },
    set keepAlive(on) {
      state.keepAlive = on
    },
    reusedWrites: () => reusedWrites,
    stopListening: () => {
      server.close()
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/**
 * The config of a `users` resource over this upstream, with a `set_role` action expecting the role back.
 * `batch`: reads several users per request (`get.batch` on `GET /users?ids=…`); `ids_param` names another
 * parameter, one this upstream ignores (a wrong config: it answers its first page instead). `expect_status`:
 * the action's `expect.status` (default [200]).
 */
export function usersResourceConfig(origin: string, options: { readonly batch?: { readonly ids_param: string }; readonly expect_status?: readonly number[] } = {}): Record<string, unknown> {
  return {
    description: 'Users of a REST API (test upstream)',
    environment: { name: 'users-test', host: origin },
    connector: {
      kind: 'http',
      sources: [{ name: 'main', base_url: origin }],
      timeout_ms: 5000,
      list: { path: '/users', page_size_param: 'limit', pagination: { style: 'cursor', param: 'cursor', next_cursor_path: 'next_cursor' }, items_path: 'items' },
      get: { path: '/users/{id}', ...(options.batch ? { batch: { path: '/users', ids_param: options.batch.ids_param } } : {}) },
      version: { from: 'field', field: 'version' },
    },
    fields: { id: 'string', name: 'string', role: 'string', status: 'string', version: 'integer' },
    version_field: 'version',
    review_fields: ['id', 'name', 'role', 'status'],
    actions: {
      set_role: {
        description: 'Set the role of a user',
        params: { role: { type: 'string' } },
        set: { role: '{{params.role}}' },
        precondition: { status: 'active' },
        write: { method: 'PATCH', path: '/users/{id}', body: { role: '{{set.role}}' }, if_match: true },
        expect: { status: options.expect_status ?? [200] },
      },
    },
  }
}

import type { ServerResponse } from 'node:http'
import { startUpstream, type SeenRequest } from '../../connectors/http/upstream-server.js'
import type { User } from './users-upstream.js'
import { userIdOf, usersPage } from './users-upstream.js'

/** What one PATCH's handler can do: apply it (If-Match checked), answer anything, or drop the connection. */
export interface WriteTools {
  readonly id: string
  readonly n: number
  readonly before: User | undefined
  /** applies the PATCH as a conforming upstream would; returns its normal answer */
  apply(): [number, unknown]
  send(status: number, body?: unknown, headers?: Record<string, string>): void
  destroy(): void
}

export interface FaultUsers {
  readonly origin: string
  readonly users: Map<string, User>
  readonly writeLog: string[]
  readonly writes: Map<string, number>
  /** a PATCH's handling; default: apply and answer */
  onWrite: (t: WriteTools) => Promise<void> | void
  /** a GET by id: return a user to answer instead of the current one (a lagging replica), or undefined */
  onRead: (id: string) => User | undefined
  /** a GET by id answered otherwise (a 429, say): status, body and headers, or undefined to answer as usual */
  onReadAnswer: (id: string) => readonly [number, unknown, Record<string, string>?] | undefined
  close(): Promise<void>
}

export async function startFaultUsers(count: number): Promise<FaultUsers> {
  const users = new Map<string, User>()
  for (let i = 1; i <= count; i++) users.set(userIdOf(i), { id: userIdOf(i), name: `User ${i}`, role: 'member', status: 'active', version: 1 })
  const writeLog: string[] = []
  const writes = new Map<string, number>()
  const state = {
    onWrite: (t: WriteTools): Promise<void> | void => {
      t.send(...t.apply())
    },
    onRead: (_id: string): User | undefined => undefined,
    onReadAnswer: (_id: string): readonly [number, unknown, Record<string, string>?] | undefined => undefined,
  }
  const send = (res: ServerResponse, status: number, body?: unknown, headers: Record<string, string> = {}) => {
    const text = body === undefined ? '' : JSON.stringify(body)
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers })
    res.end(text)
  }
  const handle = async (req: SeenRequest, res: ServerResponse) => {
    const { url, body } = req
    if (req.method === 'GET' && url.pathname === '/users') return send(res, 200, usersPage(users, url))
    const match = /^\/users\/([^/]+)$/.exec(url.pathname)
    if (!match) return send(res, 404, { error: 'no route' })
    const id = decodeURIComponent(match[1]!)
    if (req.method === 'GET') {
      const answer = state.onReadAnswer(id)
      if (answer) return send(res, answer[0], answer[1], answer[2])
      const user = state.onRead(id) ?? users.get(id)
      return user ? send(res, 200, user) : send(res, 404, { error: 'not found' })
    }
    if (req.method === 'PATCH') {
      const n = writeLog.push(id)
      writes.set(id, (writes.get(id) ?? 0) + 1)
      const before = users.get(id) ? { ...users.get(id)! } : undefined
      const apply = (): [number, unknown] => {
        const user = users.get(id)
        if (!user) return [404, { error: 'not found' }]
        if (req.headers['if-match'] !== String(user.version)) return [412, { error: 'version changed' }]
        const patch = JSON.parse(body || '{}') as Partial<User>
        const updated = { ...user, ...patch, id, version: user.version + 1 }
        users.set(id, updated)
        return [200, updated]
      }
      await state.onWrite({ id, n, before, apply, send: (s, b, h) => send(res, s, b, h), destroy: () => res.socket?.destroy() })
      return
    }
    return send(res, 405, { error: 'method not allowed' })
  }
  const server = await startUpstream(async (req, res) => {
    try {
      await handle(req, res)
    } catch (error) {
      if (!res.headersSent) send(res, 500, { error: String(error) })
    }
  })
  return {
    origin: server.origin,
    users,
    writeLog,
    writes,
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
    get onReadAnswer() {
      return state.onReadAnswer
    },
    set onReadAnswer(fn) {
      state.onReadAnswer = fn
    },
    close: () => server.close(),
  }
}

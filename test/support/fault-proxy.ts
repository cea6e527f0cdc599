import { createServer, request as httpRequest, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'

/**
 * A real HTTP proxy on 127.0.0.1 in front of any upstream, that injects one fault per request where a rule
 * says so. Tests point a connector's `base_url` at `proxy.origin` and keep the upstream itself honest, so the
 * same upstream serves the faulty walk and the check of what really happened.
 *
 * @example
 * const proxy = await startFaultProxy({ target: upstream.origin })
 * proxy.rule((req) => req.count === 2 ? { kind: 'status', status: 503 } : undefined)
 */
export interface FaultProxy {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string
  /** Every request that reached the proxy, with the fault it got (or none). */
  readonly seen: readonly ProxiedRequest[]
  /** Adds a rule; the first rule that answers a fault for a request applies. Returns a remover. */
  rule(rule: FaultRule): () => void
  /** Removes every rule: the proxy becomes transparent. */
  clear(): void
  close(): Promise<void>
}

export interface ProxiedRequest {
  readonly method: string
  readonly url: URL
  readonly headers: IncomingHttpHeaders
  readonly body: string
  /** 1 for the first request the proxy saw, 2 for the next… */
  readonly count: number
  fault?: Fault['kind']
}

export type FaultRule = (request: ProxiedRequest) => Fault | undefined | Promise<Fault | undefined>

/** What the proxy does to one request instead of, or on top of, forwarding it. */
export type Fault =
  /** forward after `ms` */
  | { readonly kind: 'latency'; readonly ms: number }
  /** never answer (the client's timeout decides) */
  | { readonly kind: 'hang' }
  /** answer this status without forwarding */
  | { readonly kind: 'status'; readonly status: number; readonly body?: unknown; readonly headers?: Readonly<Record<string, string>> }
  /** 429 with Retry-After */
  | { readonly kind: 'rate_limit'; readonly retryAfterSeconds: number }
  /** close the connection without an answer */
  | { readonly kind: 'reset' }
  /** forward, then send only the first `bytes` of the upstream's body under its full Content-Length */
  | { readonly kind: 'truncate'; readonly bytes: number }
  /** forward, then rewrite the JSON body (rename a field, drop items, swap the record…) */
  | { readonly kind: 'rewrite'; readonly transform: (body: unknown, request: ProxiedRequest) => unknown }
  /** run `effect` (e.g. change the upstream between two pages), then forward */
  | { readonly kind: 'before'; readonly effect: () => unknown | Promise<unknown> }

export interface FaultProxyOptions {
  /** the upstream's origin, `http://127.0.0.1:<port>` */
  readonly target: string
}

/** Starts a fault proxy on 127.0.0.1 and a free port. */
export async function startFaultProxy(options: FaultProxyOptions): Promise<FaultProxy> {
  const target = new URL(options.target)
  const rules: FaultRule[] = []
  const seen: ProxiedRequest[] = []
  const sockets = new Set<Socket>()
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const proxied: ProxiedRequest = {
        method: req.method ?? 'GET',
        url: new URL(req.url ?? '/', target),
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        count: seen.length + 1,
      }
      seen.push(proxied)
      handle(proxied, res).catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(599, { 'content-type': 'text/plain' })
        res.end(`fault proxy: ${String(error)}`)
      })
    })
  })
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })

  async function pickFault(request: ProxiedRequest): Promise<Fault | undefined> {
    for (const rule of rules) {
      const fault = await rule(request)
      if (fault) return fault
    }
    return undefined
  }

  async function handle(request: ProxiedRequest, res: ServerResponse): Promise<void> {
    const fault = await pickFault(request)
    request.fault = fault?.kind
    switch (fault?.kind) {
      case 'hang':
        return // the client gives up; close() ends the socket
      case 'reset':
        res.socket?.destroy()
        return
      case 'status': {
        const text = fault.body === undefined ? '' : JSON.stringify(fault.body)
        res.writeHead(fault.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...fault.headers })
        res.end(text)
        return
      }
      case 'rate_limit': {
        const text = JSON.stringify({ error: 'rate limited' })
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': String(fault.retryAfterSeconds), 'content-length': Buffer.byteLength(text) })
        res.end(text)
        return
      }
      case 'latency':
        await new Promise((resolve) => setTimeout(resolve, fault.ms))
        break
      case 'before':
        await fault.effect()
        break
      default:
        break
    }
    const answer = await forward(target, request)
    if (fault?.kind === 'truncate') {
      res.writeHead(answer.status, { ...answer.headers, 'content-length': String(answer.body.length) })
      res.write(answer.body.subarray(0, Math.min(fault.bytes, Math.max(0, answer.body.length - 1))))
      // Cut short: the client was promised more bytes than it gets.
      res.socket?.destroy()
      return
    }
    let body = answer.body
    if (fault?.kind === 'rewrite') body = Buffer.from(JSON.stringify(fault.transform(JSON.parse(body.toString('utf8')), request)))
    res.writeHead(answer.status, { ...answer.headers, 'content-length': String(body.length) })
    res.end(body)
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  return {
    origin: `http://127.0.0.1:${port}`,
    seen,
    rule(rule) {
      rules.push(rule)
      return () => {
        const at = rules.indexOf(rule)
        if (at >= 0) rules.splice(at, 1)
      }
    },
    clear() {
      rules.length = 0
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  }
}

interface Answer {
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: Buffer
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'host'])

function forward(target: URL, request: ProxiedRequest): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {}
    for (const [name, value] of Object.entries(request.headers)) {
      if (value === undefined || HOP_BY_HOP.has(name)) continue
      headers[name] = Array.isArray(value) ? value.join(', ') : value
    }
    const upstream = httpRequest(
      { host: target.hostname, port: target.port, method: request.method, path: request.url.pathname + request.url.search, headers },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () => {
          const out: Record<string, string> = {}
          for (const [name, value] of Object.entries(res.headers)) {
            if (value === undefined || HOP_BY_HOP.has(name)) continue
            out[name] = Array.isArray(value) ? value.join(', ') : value
          }
          resolve({ status: res.statusCode ?? 502, headers: out, body: Buffer.concat(chunks) })
        })
        res.on('error', reject)
      },
    )
    upstream.on('error', reject)
    upstream.end(request.body)
  })
}

/**
 * A rule that lets each distinct value of the query parameter `param` be used `uses` times, then answers
 * 410 Gone for it: a cursor that expires.
 */
export function cursorExpiresAfter(param: string, uses: number): FaultRule {
  const counts = new Map<string, number>()
  return (request) => {
    const value = request.url.searchParams.get(param)
    if (value === null) return undefined
    const n = (counts.get(value) ?? 0) + 1
    counts.set(value, n)
    return n > uses ? { kind: 'status', status: 410, body: { error: 'cursor expired' } } : undefined
  }
}

/** A rewrite that renames `from` to `to` in every object of the array at `itemsKey` (schema drift). */
export function renameField(itemsKey: string, from: string, to: string): Fault {
  return {
    kind: 'rewrite',
    transform: (body) => {
      const page = body as Record<string, unknown>
      const items = page[itemsKey] as Record<string, unknown>[]
      page[itemsKey] = items.map(({ [from]: value, ...rest }) => ({ ...rest, [to]: value }))
      return page
    },
  }
}

import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/** A request as the test upstream received it. */
export interface SeenRequest {
  readonly method: string
  /** Path and query, exactly as sent on the wire. */
  readonly rawUrl: string
  readonly url: URL
  readonly headers: IncomingHttpHeaders
  readonly body: string
}

export type Handler = (req: SeenRequest, res: ServerResponse) => unknown

export interface TestUpstream {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string
  readonly port: number
  readonly seen: SeenRequest[]
  close(): Promise<void>
}

/** A real HTTP server on 127.0.0.1 and a free port, recording every request it receives. */
export async function startUpstream(handler: Handler): Promise<TestUpstream> {
  const seen: SeenRequest[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const rawUrl = req.url ?? '/'
      const request: SeenRequest = {
        method: req.method ?? 'GET',
        rawUrl,
        url: new URL(rawUrl, 'http://127.0.0.1'),
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      }
      seen.push(request)
      Promise.resolve(handler(request, res)).catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(599)
        res.end(String(error))
      })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** Sends a JSON answer. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body)
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers })
  res.end(text)
}

/** Sends JSON text as the test wrote it, literals and all (JSON.stringify could not write 9007199254740993). */
export function sendRawJson(res: ServerResponse, text: string): void {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
  res.end(text)
}

/** An upstream answering every request 200 with the JSON text `answer` writes for it, literals and all. */
export function startRawJsonUpstream(answer: (req: SeenRequest) => string): Promise<TestUpstream> {
  return startUpstream((req, res) => sendRawJson(res, answer(req)))
}

/** Answers `GET /items/{id}` from `items` (404 when absent); false for any other path, left to the caller. */
export function answerItemById(items: readonly { readonly id: string }[], req: SeenRequest, res: ServerResponse): boolean {
  const get = /^\/items\/([^/]+)$/.exec(req.url.pathname)
  if (!get) return false
  const item = items.find((i) => i.id === get[1])
  sendJson(res, item ? 200 : 404, item ?? { error: 'not found' })
  return true
}

/** Resolves after `ms`, without keeping the process alive on its own. */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref())
}

import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createRequire } from 'node:module'

interface ExpressApp {
  use(...handlers: unknown[]): void
  listen(port: number, host: string, callback: () => void): Server
}
interface JsonServer {
  create(): ExpressApp
  router(db: Record<string, unknown>): unknown
  defaults(options: { logger: boolean }): unknown[]
}
const jsonServer = createRequire(import.meta.url)('json-server') as JsonServer

export interface JsonServerUpstream {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string
  /** The path and query of every request, as received. */
  readonly requests: string[]
  close(): Promise<void>
}

/** json-server 0.17, the real package, serving `db` on 127.0.0.1 and a free port. */
export async function startJsonServer(db: Record<string, unknown>): Promise<JsonServerUpstream> {
  const requests: string[] = []
  const app = jsonServer.create()
  app.use((req: { url: string }, _res: unknown, next: () => void) => {
    requests.push(req.url)
    next()
  })
  app.use(jsonServer.defaults({ logger: false }))
  app.use(jsonServer.router(db))
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s))
  })
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

import { createServer, connect, type Server, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'

/** A real TCP relay on 127.0.0.1 in front of the PostgreSQL server, which a test can make silent, let speak again, or cut. */
export interface Relay {
  readonly port: number
  /** forward nothing more, on the connections open and on new ones, which are accepted (a server that hangs) */
  silence(): void
  /** forward again what was held */
  speak(): void
  /** stop listening and cut every connection: the store's connections end, new ones are refused */
  cut(): Promise<void>
}

export async function startRelay(target: URL): Promise<Relay> {
  const sockets = new Set<Socket>()
  let silent = false
  const server: Server = createServer((client) => {
    sockets.add(client)
    client.on('close', () => sockets.delete(client))
    client.on('error', () => undefined)
    const upstream = connect(Number(target.port || 5432), target.hostname)
    sockets.add(upstream)
    upstream.on('close', () => sockets.delete(upstream))
    upstream.on('error', () => client.destroy())
    client.on('close', () => upstream.destroy())
    upstream.on('close', () => client.destroy())
    client.pipe(upstream)
    upstream.pipe(client)
    if (silent) for (const socket of [client, upstream]) socket.pause()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as AddressInfo).port,
    silence() {
      silent = true
      for (const socket of sockets) socket.pause()
    },
    speak() {
      silent = false
      for (const socket of sockets) socket.resume()
    },
    cut: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        for (const socket of sockets) socket.destroy()
      }),
  }
}

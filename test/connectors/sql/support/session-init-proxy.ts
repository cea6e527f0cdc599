import { createServer, type AddressInfo, type Socket } from 'node:net'
import { upstreamFor } from './cutting-proxy.js'

/**
 * A TCP proxy on 127.0.0.1 in front of a MySQL/MariaDB server that runs `statement` on each connection before its
 * first command: a session setting (`SET SESSION TRANSACTION READ ONLY`) the server applies to that connection alone,
 * as a server's init_connect or a pooling proxy would, without touching the shared server's global state. Once
 * authenticated, the client's first packet of sequence 0 is a command: the proxy sends its own COM_QUERY first,
 * swallows the server's one-packet answer (OK, or ERR), then forwards what the client sent. `answers` keeps those.
 */
export interface SessionInitProxy {
  readonly port: number
  /** The first byte of each answer to `statement` (0x00 OK, 0xff ERR). */
  readonly answers: readonly number[]
  close(): Promise<void>
}

export async function startSessionInitProxy(target: { host: string; port: number }, statement: string): Promise<SessionInitProxy> {
  const answers: number[] = []
  const sockets = new Set<Socket>()
  const query = Buffer.concat([Buffer.from([0x03]), Buffer.from(statement, 'utf8')])
  const packet = Buffer.concat([Buffer.from([query.length & 0xff, (query.length >> 8) & 0xff, query.length >> 16, 0]), query])
  const server = createServer((client) => {
    const upstream = upstreamFor(client, target, sockets)
    // 'handshake': passed through; 'waiting': our statement sent, its answer not yet read; 'through': plain proxy
    let phase: 'handshake' | 'waiting' | 'through' = 'handshake'
    let fromClient: Buffer = Buffer.alloc(0)
    let fromServer: Buffer = Buffer.alloc(0)
    upstream.on('data', (chunk: Buffer) => {
      if (phase !== 'waiting') return void client.write(chunk)
      fromServer = Buffer.concat([fromServer, chunk])
      if (fromServer.length < 4) return
      const length = fromServer.readUIntLE(0, 3)
      if (fromServer.length < 4 + length) return
      answers.push(fromServer[4]!)
      const rest = fromServer.subarray(4 + length)
      phase = 'through'
      if (rest.length > 0) client.write(rest)
      upstream.write(fromClient)
      fromClient = Buffer.alloc(0)
    })
    client.on('data', (chunk: Buffer) => {
      if (phase === 'through') return void upstream.write(chunk)
      if (phase === 'waiting') return void (fromClient = Buffer.concat([fromClient, chunk]))
      // the handshake: every packet of it after the server's greeting has a sequence id above 0
      if (chunk.length >= 4 && chunk[3] === 0) {
        phase = 'waiting'
        fromClient = chunk
        upstream.write(packet)
        return
      }
      upstream.write(chunk)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as AddressInfo).port,
    answers,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  }
}

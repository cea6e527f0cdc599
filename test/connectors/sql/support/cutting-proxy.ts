import { createServer, connect, type AddressInfo, type Socket } from 'node:net'

/**
 * A TCP proxy on 127.0.0.1 in front of a database server, that cuts a connection at the first client packet whose
 * bytes hold `pattern` once armed: `before` drops the packet (the server never sees the statement), `after`
 * forwards it and then closes the connection (the server got the statement, the client gets no answer). With
 * `answer`, `after` gives the client those bytes (a forged server answer, e.g. a MySQL ERR packet) before closing.
 * With `onlyAfter`, only a connection that has already sent a packet holding it is cut (a write's COMMIT, not a
 * read session's).
 */
export interface CuttingProxy {
  readonly port: number
  arm(pattern: string, when: 'before' | 'after', answer?: Buffer, onlyAfter?: string): void
  /** How many connections were cut. */
  readonly cuts: number
  close(): Promise<void>
}

export async function startCuttingProxy(target: { host: string; port: number }): Promise<CuttingProxy> {
  let armed: { pattern: string; when: 'before' | 'after'; answer?: Buffer | undefined; onlyAfter?: string | undefined } | null = null
  let cuts = 0
  const sockets = new Set<Socket>()
  const server = createServer((client) => {
    const upstream = upstreamFor(client, target, sockets)
    upstream.on('data', (chunk) => client.write(chunk))
    let seen = ''
    client.on('data', (chunk: Buffer) => {
      const text = chunk.toString('latin1')
      const eligible = armed !== null && (armed.onlyAfter === undefined || seen.includes(armed.onlyAfter))
      if (armed?.onlyAfter !== undefined && text.includes(armed.onlyAfter)) seen = armed.onlyAfter
      const cut = eligible && armed !== null && text.includes(armed.pattern) ? armed : null
      if (cut === null) return void upstream.write(chunk)
      armed = null
      cuts += 1
      if (cut.answer !== undefined && cut.when === 'after') client.end(cut.answer)
      else client.destroy()
      if (cut.when === 'after') upstream.end(chunk)
      else upstream.destroy()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as AddressInfo).port,
    arm: (pattern, when, answer, onlyAfter) => void (armed = { pattern, when, answer, onlyAfter }),
    get cuts() {
      return cuts
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  }
}

/** The proxy's connection to `target` for `client`: both kept in `sockets` while open, each closed with the other. */
export function upstreamFor(client: Socket, target: { host: string; port: number }, sockets: Set<Socket>): Socket {
  const upstream = connect(target.port, target.host)
  for (const socket of [client, upstream]) {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => undefined)
  }
  upstream.on('close', () => client.destroy())
  client.on('close', () => upstream.destroy())
  return upstream
}

/** A MySQL ERR packet answering a COM_QUERY (sequence id 1): the error number, SQLSTATE and message a server would send. */
export function mysqlErrPacket(errno: number, sqlState: string, message: string): Buffer {
  const payload = Buffer.concat([Buffer.from([0xff, errno & 0xff, errno >> 8]), Buffer.from(`#${sqlState}${message}`, 'utf8')])
  return Buffer.concat([Buffer.from([payload.length & 0xff, (payload.length >> 8) & 0xff, payload.length >> 16, 1]), payload])
}

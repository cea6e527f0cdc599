import { connect, type Socket } from 'node:net'

/** A raw HTTP/1.1 client that read the answer's headers and a little of its body, then stopped reading (its socket held open). */
export interface StalledClient {
  /** the status line and headers as received */
  readonly head: string
  /** body bytes received before it stopped reading (chunked framing included) */
  readonly received: number
  /** its own port: the server's side of the connection is the socket whose remote port this is */
  readonly localPort: number
  /** whether the client has seen the connection closed (a client not reading may not see it until it reads) */
  closed(): boolean
  /** the client leaves (its socket destroyed) */
  leave(): void
  /** the client reads again: every body byte it gets until the server closes the connection (chunked framing included) */
  readRest(): Promise<string>
}

/**
 * GETs `path` on `base` with `headers` (or sends `request.method` with `request.body` as JSON), reads the headers and
 * at least `bytes` of the body, then stops reading and keeps the socket open: the client that holds an export or a
 * search without reading it, which `fetch` cannot be made to be (its body stream buffers ahead).
 */
export async function openAndStall(base: string, path: string, headers: Record<string, string>, bytes = 64 * 1024, request: { readonly method: string; readonly body: string } | null = null): Promise<StalledClient> {
  const url = new URL(base)
  const socket: Socket = connect(Number(url.port), url.hostname)
  let closed = false
  socket.on('close', () => (closed = true))
  socket.on('error', () => undefined)
  const lines = Object.entries({ host: url.host, ...headers }).map(([k, v]) => `${k}: ${v}\r\n`)
  const body = request === null ? '' : request.body
  const framing = request === null ? [] : [`content-type: application/json\r\n`, `content-length: ${Buffer.byteLength(body)}\r\n`]
  socket.write(`${request?.method ?? 'GET'} ${path} HTTP/1.1\r\n${[...lines, ...framing].join('')}\r\n${body}`)
  let buffer = Buffer.alloc(0)
  const { head, received } = await new Promise<{ head: string; received: number }>((resolve, reject) => {
    socket.on('close', () => reject(new Error(`the server closed the connection first: ${buffer.toString('latin1').slice(0, 500)}`)))
    const onData = (data: Buffer) => {
      buffer = Buffer.concat([buffer, data])
      const at = buffer.indexOf('\r\n\r\n')
      if (at < 0 || buffer.length - at - 4 < bytes) return
      socket.off('data', onData)
      socket.pause()
      resolve({ head: buffer.subarray(0, at).toString('latin1'), received: buffer.length - at - 4 })
    }
    socket.on('data', onData)
  })
  socket.removeAllListeners('close')
  socket.on('close', () => (closed = true))
  const readRest = () =>
    new Promise<string>((resolve) => {
      const chunks: Buffer[] = [buffer.subarray(buffer.indexOf('\r\n\r\n') + 4)]
      if (closed) return resolve(Buffer.concat(chunks).toString('utf8'))
      socket.on('data', (data: Buffer) => chunks.push(data))
      socket.once('close', () => resolve(Buffer.concat(chunks).toString('utf8')))
      socket.resume()
    })
  return { head, received, localPort: socket.localPort!, closed: () => closed, leave: () => socket.destroy(), readRest }
}

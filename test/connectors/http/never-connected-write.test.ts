import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { connect, type Socket } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { createHttpConnector } from '../../../src/connectors/http/index.js'
import type { WriteOutcome } from '../../../src/connectors/connector.js'
import { callLog, httpResource } from './fixtures.js'
import { startUpstream, type TestUpstream } from './upstream-server.js'

/**
 * A write whose connection was never made (refused, a TLS handshake that failed) sent not one byte of the
 * request: over node:http, which sees its new socket never connect, the write is `not_sent`, not `unknown`.
 * A given fetch does not say how far it got, so there it stays `unknown`.
 */
describe('a write whose connection was never made', () => {
  let refused: string
  let plain: TestUpstream
  before(async () => {
    // a port that refuses connections: a server's, closed
    const closed = await startUpstream((_req, res) => res.end())
    refused = closed.origin
    await closed.close()
    // a plain-HTTP server: a TLS ClientHello to it fails the handshake before the request is written
    plain = await startUpstream((_req, res) => res.end())
  })
  after(() => plain.close())

  const write = async (origin: string, options: { fetch?: typeof fetch } = {}) => {
    const log = callLog()
    const conn = createHttpConnector({ ...options, resource: httpResource({ sources: [{ name: 'main', base_url: origin }] }), onCall: log.onCall })
    try {
      const outcome: WriteOutcome = await conn.write({ id: 'x', expectedVersion: '1', set: { status: 'paused' }, precondition: {}, http: { method: 'PATCH', path: '/items/x', body: { status: 'paused' }, ifMatch: false } })
      return { outcome, calls: log.calls.map((c) => [c.status, c.outcome]) }
    } finally {
      await conn.close()
    }
  }

  it('node:http, connection refused: not_sent, saying the write was never sent; the call row says so', async () => {
    const { outcome, calls } = await write(refused)
    assert.deepEqual(outcome, { kind: 'not_sent', message: 'source "main" could not be reached (ECONNREFUSED); no connection was made, so the write was never sent' })
    assert.deepEqual(calls, [[null, 'not_sent']])
  })

  it('node:http, a TLS handshake that fails: not_sent, and the upstream received no request', async () => {
    const { outcome } = await write(plain.origin.replace('http:', 'https:'))
    assert.equal(outcome.kind, 'not_sent', JSON.stringify(outcome))
    assert.match(outcome.kind === 'not_sent' ? outcome.message : '', /^source "main" could not be reached \(.+\); no connection was made, so the write was never sent$/)
    assert.equal(plain.seen.length, 0)
  })

  it('a given fetch, connection refused: unknown (fetch does not say how far it got)', async () => {
    const { outcome, calls } = await write(refused, { fetch: globalThis.fetch })
    assert.equal(outcome.kind, 'unknown', JSON.stringify(outcome))
    assert.match(outcome.kind === 'unknown' ? outcome.message : '', /the write may or may not have happened/)
    assert.deepEqual(calls, [[null, 'unknown']])
  })
})

/**
 * A server that never accepts: a child process listens (backlog 1) and then blocks its event loop, so the
 * kernel queues the first connections and, the queue full, drops every later SYN. A connect to it never
 * completes: it is a real loopback server whose handshake does not finish, not a stubbed socket.
 */
async function neverAccepting(): Promise<{ origin: string; fillers: Socket[]; stop(): void }> {
  const child = spawn(process.execPath, [
    '-e',
    `const s = require('node:net').createServer(); s.listen({ port: 0, host: '127.0.0.1', backlog: 1 }, () => { process.stdout.write(String(s.address().port) + '\\n'); Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 120000) })`,
  ], { stdio: ['ignore', 'pipe', 'inherit'] })
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim())))
    child.once('exit', (code) => reject(new Error(`the never-accepting server exited (${code})`)))
  })
  // fill its accept queue: connect until one connection does not complete
  const fillers: Socket[] = []
  for (let i = 0; ; i++) {
    assert.ok(i < 600, 'the accept queue never filled')
    const socket = connect(port, '127.0.0.1')
    fillers.push(socket)
    const made = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 300)
      socket.once('connect', () => (clearTimeout(timer), resolve(true)))
      socket.once('error', () => (clearTimeout(timer), resolve(false)))
    })
    if (!made) break
  }
  return {
    origin: `http://127.0.0.1:${port}`,
    fillers,
    stop: () => {
      for (const socket of fillers) socket.destroy()
      child.kill()
    },
  }
}

describe('a write whose connection did not complete within the time limit', () => {
  let server: Awaited<ReturnType<typeof neverAccepting>>
  let silent: TestUpstream
  before(async () => {
    server = await neverAccepting()
    // accepts and reads the request, never answers
    silent = await startUpstream(() => new Promise(() => undefined))
  })
  after(async () => {
    server?.stop()
    await silent?.close()
  })

  const write = async (origin: string, options: { fetch?: typeof fetch } = {}) => {
    const log = callLog()
    const conn = createHttpConnector({ ...options, resource: httpResource({ sources: [{ name: 'main', base_url: origin }], timeout_ms: 400 }), onCall: log.onCall })
    try {
      const outcome: WriteOutcome = await conn.write({ id: 'x', expectedVersion: '1', set: { status: 'paused' }, precondition: {}, http: { method: 'PATCH', path: '/items/x', body: { status: 'paused' }, ifMatch: false } })
      const read = await conn.readByIds(['x'])
      return { outcome, calls: log.calls.map((c) => [c.status, c.outcome]), read: read.failed.map((f) => f.message) }
    } finally {
      await conn.close()
    }
  }

  it('node:http, the TCP handshake never completes (a server whose accept queue is full): not_sent, the connection never made', async () => {
    const { outcome, calls, read } = await write(server.origin)
    assert.deepEqual(outcome, { kind: 'not_sent', message: 'source "main" could not be reached: no connection within 400 ms (timeout_ms); no connection was made, so the write was never sent' })
    assert.deepEqual(calls[0], [null, 'not_sent'])
    assert.deepEqual(read, ['source "main" could not be reached: no connection within 400 ms (timeout_ms)'])
  })

  it('node:http, connected and the request sent, no answer in time: unknown, as ever', async () => {
    const { outcome } = await write(silent.origin)
    assert.deepEqual(outcome, { kind: 'unknown', message: 'source "main" did not answer within 400 ms (timeout_ms); the write may or may not have happened' })
  })

  it('a given fetch, the TCP handshake never completes: unknown (fetch does not say how far it got)', async () => {
    const { outcome } = await write(server.origin, { fetch: globalThis.fetch })
    assert.equal(outcome.kind, 'unknown', JSON.stringify(outcome))
  })
})

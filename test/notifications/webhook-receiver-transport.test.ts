import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:net'
import type { AddressInfo, Socket } from 'node:net'
import { describe, test } from 'node:test'
import { createNotifier, type NotificationEvent, type WebhookDelivery } from '../../src/notifications/index.js'
import { STORE_KINDS, createTestStore, type StoreKind } from '../support/stores.js'

/**
 * Receivers that misbehave below HTTP's status line: one that never answers, one that answers 200 and then streams
 * without end, one that cuts the connection before or after its status line. Real TCP servers on 127.0.0.1, so the
 * bytes are exactly the ones written.
 */
const EVENT: NotificationEvent = {
  kind: 'plan.awaiting_review',
  plan: { plan_id: 'plan_transport', resource: 'subscriptions', environment: 'billing-prod', action: 'pause_collection', target_count: 5 },
  reviewers_needed: 1,
  proposed_by: 'ci-agent',
  expires_at: null,
}
const silent = { warn: () => undefined, error: () => undefined }

/** A TCP receiver: `onRequest` gets each socket once the request's head has arrived. */
async function rawReceiver(onRequest: (socket: Socket) => void): Promise<{ url: string; requests: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>()
  const state = { requests: 0 }
  const server: Server = createServer((socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => undefined)
    let head = ''
    const onData = (chunk: Buffer) => {
      head += chunk.toString('latin1')
      if (!head.includes('\r\n\r\n')) return
      socket.off('data', onData)
      state.requests++
      onRequest(socket)
    }
    socket.on('data', onData)
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    get requests() {
      return state.requests
    },
    close: async () => {
      for (const s of sockets) s.destroy()
      await new Promise((r) => server.close(r))
    },
  }
}

/** EVENT sent to `url` (2 attempts, 10 ms apart, `timeoutMs` each); how its delivery ended, and how long it took. */
async function deliverTo(kind: StoreKind, url: string, timeoutMs = 30_000): Promise<{ delivery: WebhookDelivery; ms: number }> {
  const { store, drop } = await createTestStore(kind)
  try {
    const notifier = createNotifier({
      config: { webhooks: [{ name: 'reviewers', url, format: 'slack' }], retry: { max_attempts: 2, initial_backoff_ms: 10, max_backoff_ms: 10 }, timeout_ms: timeoutMs },
      store,
      log: silent,
      baseUrl: 'https://warrant.example',
    })
    const started = Date.now()
    notifier.emit(EVENT)
    await notifier.flush()
    const ms = Date.now() - started
    const [delivery] = await notifier.deliveries({ plan_id: 'plan_transport' })
    await notifier.close()
    return { delivery: delivery!, ms }
  } finally {
    await drop()
  }
}

for (const kind of STORE_KINDS) {
  describe(`a receiver misbehaving below the status line (${kind} store)`, () => {
    test('one that never answers: each attempt ends at timeout_ms, the delivery fails saying so', async () => {
      const receiver = await rawReceiver(() => undefined)
      try {
        const { delivery, ms } = await deliverTo(kind, receiver.url, 300)
        assert.equal(receiver.requests, 2)
        assert.deepEqual([delivery.state, delivery.attempts, delivery.last_status], ['failed', 2, null])
        assert.equal(delivery.last_error, 'no answer within 300 ms (the receiver may have had the delivery)')
        assert.ok(ms < 5_000, `two 300 ms attempts took ${ms} ms`)
      } finally {
        await receiver.close()
      }
    })

    test('one that answers 200 and streams a body without end: delivered, the body not read', async () => {
      let written = 0
      const receiver = await rawReceiver((socket) => {
        socket.write('HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n')
        const chunk = Buffer.alloc(64 * 1024, 0x61)
        const more = () => {
          // endless: stops only when the client goes away (or at 256 MiB, a client that reads everything)
          while (!socket.destroyed && written < 256 * 1024 * 1024) {
            written += chunk.length
            if (!socket.write(`${chunk.length.toString(16)}\r\n${chunk.toString('latin1')}\r\n`)) return void socket.once('drain', more)
          }
        }
        more()
      })
      try {
        const { delivery, ms } = await deliverTo(kind, receiver.url, 2_000)
        assert.deepEqual([delivery.state, delivery.attempts, delivery.last_status], ['delivered', 1, 200])
        assert.ok(written < 64 * 1024 * 1024, `the receiver wrote ${written} bytes before the gateway hung up`)
        assert.ok(ms < 2_000, `took ${ms} ms`)
      } finally {
        await receiver.close()
      }
    })

    test('one that cuts the connection before its status line: retried, and the record says no answer came, not that it was unreachable', async () => {
      const receiver = await rawReceiver((socket) => {
        socket.write('HTTP/1.1 20')
        socket.resetAndDestroy()
      })
      try {
        const { delivery } = await deliverTo(kind, receiver.url)
        assert.equal(receiver.requests, 2, 'retried')
        assert.deepEqual([delivery.state, delivery.attempts, delivery.last_status], ['failed', 2, null])
        // the receiver had the request: it may have acted on it, so "could not reach" would be the optimistic reading
        assert.match(delivery.last_error ?? '', /^the connection closed before the receiver answered \(it may have had the delivery\): /)
      } finally {
        await receiver.close()
      }
    })

    test('one that answers 200 and then cuts the connection mid-body: delivered (the receiver accepted it)', async () => {
      const receiver = await rawReceiver((socket) => {
        socket.write('HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\npartial')
        setTimeout(() => socket.resetAndDestroy(), 20)
      })
      try {
        const { delivery } = await deliverTo(kind, receiver.url)
        assert.equal(receiver.requests, 1)
        assert.deepEqual([delivery.state, delivery.attempts, delivery.last_status], ['delivered', 1, 200])
      } finally {
        await receiver.close()
      }
    })

    test('a receiver nobody listens on: could not reach it', async () => {
      const receiver = await rawReceiver(() => undefined)
      const url = receiver.url
      await receiver.close()
      const { delivery } = await deliverTo(kind, url)
      assert.deepEqual([delivery.state, delivery.attempts], ['failed', 2])
      assert.match(delivery.last_error ?? '', /^could not reach the receiver: ECONNREFUSED/)
    })
  })
}

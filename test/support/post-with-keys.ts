import http from 'node:http'
import type { GatewayFixture } from './gateway-fixture.js'

/** A POST with the Idempotency-Key header line sent once per key given (node joins nothing on the wire), each exactly as written (fetch would trim it). */
export function postWithKeys(fx: GatewayFixture, path: string, body: unknown, keys: readonly string[]): Promise<{ status: number; body: any }> {
  const payload = JSON.stringify(body)
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${fx.base}${path}`,
      { method: 'POST', headers: { authorization: `Bearer ${fx.tokens.agent}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), 'idempotency-key': [...keys] } },
      (res) => {
        let text = ''
        res.on('data', (chunk: Buffer) => (text += chunk.toString()))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }))
        res.on('error', reject)
      },
    )
    req.on('error', reject)
    req.end(payload)
  })
}


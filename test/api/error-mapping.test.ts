import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Hono } from 'hono'
import { toErrorResponse } from '../../src/api/index.js'
import { WarrantError } from '../../src/contract/index.js'

// A continuation followed before its not_before is refused with 429 and the seconds left; over HTTP the same wait
// is also the Retry-After header, so a plain HTTP client backs off correctly.
describe('error mapping: waits', () => {
  const silent = { error: () => undefined, warn: () => undefined, info: () => undefined, debug: () => undefined } as never
  const app = new Hono()
  app.get('/early', () => {
    throw new WarrantError('rate_limited', 'wait 25 s more', { retry_after_seconds: 25, not_before: '2025-03-08T14:20:41.000Z' })
  })
  app.get('/bad', () => {
    throw new WarrantError('invalid_request', 'no', { retry_after_seconds: 25 })
  })
  app.onError((error, c) => toErrorResponse(error, c, silent))

  it('429 with details.retry_after_seconds carries Retry-After', async () => {
    const res = await app.request('/early')
    assert.equal(res.status, 429)
    assert.equal(res.headers.get('retry-after'), '25')
    const body = (await res.json()) as { error: { code: string; details: { retry_after_seconds: number } } }
    assert.equal(body.error.code, 'rate_limited')
    assert.equal(body.error.details.retry_after_seconds, 25)
  })
  it('no Retry-After on other statuses', async () => {
    const res = await app.request('/bad')
    assert.equal(res.status, 400)
    assert.equal(res.headers.get('retry-after'), null)
  })
})

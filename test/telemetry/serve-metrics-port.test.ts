import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createCliWorkspace, serveUntil } from '../support/cli-config.js'

/** `warrant serve` with server.metrics_port: metrics without a token on loopback, the API's /metrics still needs one. */
describe('warrant serve: server.metrics_port', () => {
  let ws: Awaited<ReturnType<typeof createCliWorkspace>>
  before(async () => {
    ws = await createCliWorkspace({ count: 50, edit: (raw) => void (raw.server = { ...raw.server, metrics_port: 0 }) })
  })
  after(async () => {
    await ws?.drop()
  })

  it('prints where the metrics are, serves them there on 127.0.0.1 without a token, and not on the API port without one', async () => {
    const serve = await serveUntil(ws.configPath, ws.dir, (out) => /without a token: http:\/\/\S+\/metrics/.test(out) && /health:\s+http:\/\/\S+\/health/.test(out))
    try {
      const urls = { metrics: /without a token: (http:\/\/\S+\/metrics)/.exec(serve.printed)![1]!, api: /health:\s+(http:\/\/\S+)\/health/.exec(serve.printed)![1]! }
      assert.match(urls.metrics, /^http:\/\/127\.0\.0\.1:\d+\/metrics$/, 'loopback by default')
      const open = await fetch(urls.metrics)
      assert.equal(open.status, 200)
      assert.match(await open.text(), /^# HELP warrant_http_requests_total /m)
      assert.equal((await fetch(`${urls.api}/metrics`)).status, 401, 'the API port still wants an admin token')
    } finally {
      await serve.stop()
    }
  })
})

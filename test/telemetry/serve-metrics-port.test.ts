import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { after, before, describe, it } from 'node:test'
import { CLI_ENTRY, createCliWorkspace, TSX_LOADER } from '../support/cli-config.js'

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
    const child = spawn(process.execPath, ['--import', TSX_LOADER, CLI_ENTRY, 'serve', '--port', '0', '--config', ws.configPath], {
      cwd: ws.dir,
      env: { ...process.env, WARRANT_LOG_LEVEL: 'silent' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    try {
      let out = ''
      const urls = await new Promise<{ api: string; metrics: string }>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`serve printed no metrics address: ${out}`)), 60_000)
        child.stdout.on('data', (chunk) => {
          out += String(chunk)
          const metrics = /without a token: (http:\/\/\S+\/metrics)/.exec(out)?.[1]
          const api = /health:\s+(http:\/\/\S+)\/health/.exec(out)?.[1]
          if (metrics && api) {
            clearTimeout(timer)
            resolve({ api, metrics })
          }
        })
        child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${out}`)))
      })
      assert.match(urls.metrics, /^http:\/\/127\.0\.0\.1:\d+\/metrics$/, 'loopback by default')
      const open = await fetch(urls.metrics)
      assert.equal(open.status, 200)
      assert.match(await open.text(), /^# HELP warrant_http_requests_total /m)
      assert.equal((await fetch(`${urls.api}/metrics`)).status, 401, 'the API port still wants an admin token')
    } finally {
      child.kill('SIGTERM')
      await new Promise((resolve) => (child.exitCode === null ? child.once('exit', resolve) : resolve(null)))
    }
  })
})

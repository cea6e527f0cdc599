import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { connect } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { CLI_ENTRY, createCliWorkspace, TSX_LOADER } from '../support/cli-config.js'

/** The raw bytes `request` is answered with, read until the server closes the connection. */
function rawExchange(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    let answer = ''
    socket.on('data', (chunk) => (answer += String(chunk)))
    socket.on('close', () => resolve(answer))
    socket.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' || error.code === 'EPIPE' ? resolve(answer) : reject(error)))
    socket.write(request)
  })
}

function parsed(answer: string): { status: number; type: string; body: { error: { code: string; message: string; details?: Record<string, unknown> } } } {
  const [head = '', body = ''] = answer.split('\r\n\r\n')
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1])
  const type = /^content-type: (.*)$/im.exec(head)?.[1] ?? ''
  assert.notEqual(body, '', `an empty body: ${head}`)
  return { status, type, body: JSON.parse(body) }
}

// Node answered a request line or headers past its limit with 431 and no body at all, and a request line it cannot
// parse with a bare 400: nothing said which limit, nor what was wrong. `warrant serve` now answers both in the
// API's JSON error shape, naming the limit or the fault.
describe('warrant serve: a request Node refuses before any route is answered with a JSON error naming why', () => {
  let ws: Awaited<ReturnType<typeof createCliWorkspace>>
  let child: ChildProcess
  let port = 0
  before(async () => {
    ws = await createCliWorkspace({ count: 20 })
    child = spawn(process.execPath, ['--import', TSX_LOADER, CLI_ENTRY, 'serve', '--port', '0', '--config', ws.configPath], {
      cwd: ws.dir,
      env: { ...process.env, WARRANT_LOG_LEVEL: 'silent' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`serve printed no address: ${out}`)), 60_000)
      child.stdout!.on('data', (chunk) => {
        out += String(chunk)
        const found = /health:\s+http:\/\/127\.0\.0\.1:(\d+)\/health/.exec(out)?.[1]
        if (found) {
          clearTimeout(timer)
          resolve(Number(found))
        }
      })
      child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${out}`)))
    })
  })
  after(async () => {
    if (child && child.exitCode === null) {
      child.kill('SIGTERM')
      await new Promise((resolve) => child.once('exit', resolve))
    }
    await ws?.drop()
  })

  it('a 100 KB path is 431 naming the request line and header size limit', async () => {
    const answer = parsed(await rawExchange(port, `GET /v1/resources/${'a'.repeat(100_000)} HTTP/1.1\r\nHost: x\r\n\r\n`))
    assert.equal(answer.status, 431)
    assert.match(answer.type, /application\/json/)
    assert.equal(answer.body.error.code, 'headers_too_large')
    assert.match(answer.body.error.message, /URL and headers/)
    assert.match(answer.body.error.message, /\d+ bytes/)
  })

  it('an oversized header is 431 in the same shape', async () => {
    const answer = parsed(await rawExchange(port, `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(40_000)}\r\n\r\n`))
    assert.equal(answer.status, 431)
    assert.equal(answer.body.error.code, 'headers_too_large')
  })

  it('a malformed request line is 400 invalid_request saying the request is no HTTP it can read', async () => {
    const answer = parsed(await rawExchange(port, `GARBAGE\r\n\r\n`))
    assert.equal(answer.status, 400)
    assert.equal(answer.body.error.code, 'invalid_request')
    assert.match(answer.body.error.message, /malformed HTTP request/)
  })

  it('the server still answers ordinary requests afterwards', async () => {
    const response = await fetch(`http://127.0.0.1:${port}/health`)
    assert.equal(response.status, 200)
  })
})

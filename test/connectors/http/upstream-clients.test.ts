import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createServer as createHttpsServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { promisify } from 'node:util'
import { brotliCompressSync, gzipSync, deflateSync } from 'node:zlib'
import { createFetchClient } from '../../../src/connectors/http/fetch-client.js'
import { createNodeClient } from '../../../src/connectors/http/node-client.js'
import type { UpstreamClient, UpstreamExchange } from '../../../src/connectors/http/upstream-request.js'
import { TSX_LOADER } from '../../support/cli-config.js'
import { createTempDir } from '../../support/stores.js'
import { delay, startUpstream, type TestUpstream } from './upstream-server.js'

const run = promisify(execFile)

/**
 * The two upstream clients (node:http, the default; a given fetch) answer every exchange alike: what the
 * connector makes of an answer must not depend on which one sent the request.
 */
const BODY = JSON.stringify({ id: 'r1', note: 'café' })

describe('upstream clients', () => {
  let upstream: TestUpstream
  before(async () => {
    upstream = await startUpstream(async (req, res) => {
      const send = (status: number, headers: Record<string, string | string[]>, body: Buffer | string) => {
        res.writeHead(status, headers)
        res.end(body)
      }
      switch (req.url.pathname) {
        case '/json':
          return send(200, { 'content-type': 'application/json', etag: '"v1"', link: ['<a>; rel="x"', '<b>; rel="next"'] }, BODY)
        case '/gzip':
          return send(200, { 'content-encoding': 'gzip' }, gzipSync(BODY))
        case '/deflate':
          return send(200, { 'content-encoding': 'deflate' }, deflateSync(BODY))
        case '/br':
          return send(200, { 'content-encoding': 'br' }, brotliCompressSync(BODY))
        case '/bomb':
          // 64 bytes on the wire, far more once decompressed
          return send(200, { 'content-encoding': 'gzip' }, gzipSync(Buffer.alloc(200_000, 32)))
        case '/large':
          return send(200, {}, 'x'.repeat(5000))
        case '/large-chunked':
          res.writeHead(200, {})
          for (let i = 0; i < 10; i++) res.write('x'.repeat(500))
          return res.end()
        case '/redirect':
          return send(302, { location: 'http://127.0.0.1:1/elsewhere' }, '')
        case '/latin1':
          return send(200, {}, Buffer.from([0x63, 0x61, 0x66, 0xe9]))
        case '/slow-body':
          res.writeHead(200, { 'content-length': '10' })
          res.write('12345')
          await delay(3000)
          return res.end('67890')
        case '/cut':
          res.writeHead(200, { 'content-length': '100' })
          res.write('only part')
          return res.destroy()
        case '/echo':
          return send(200, { 'content-type': 'application/json' }, JSON.stringify({ method: req.method, body: req.body, headers: req.headers }))
        default:
          return send(404, {}, '{}')
      }
    })
  })
  after(() => upstream.close())

  const clients: [string, () => UpstreamClient][] = [
    ['node:http', createNodeClient],
    ['fetch', () => createFetchClient(globalThis.fetch)],
  ]
  for (const [name, make] of clients) {
    describe(name, () => {
      let client: UpstreamClient
      before(() => {
        client = make()
      })
      after(() => client.close())
      const send = (path: string, options: { method?: string; body?: string; timeoutMs?: number; maxBytes?: number; signal?: AbortSignal } = {}) =>
        client.send({
          url: new URL(path, upstream.origin),
          method: options.method ?? 'GET',
          headers: { accept: 'application/json', 'content-type': 'application/json' },
          ...(options.body === undefined ? {} : { body: options.body }),
          timeoutMs: options.timeoutMs ?? 2000,
          maxBytes: options.maxBytes ?? 1000,
          ...(options.signal ? { signal: options.signal } : {}),
        })
      const text = (result: UpstreamExchange) => (result.kind === 'response' ? result.body : `(${result.kind})`)

      it('a JSON answer: status, body as text, headers (repeated ones joined)', async () => {
        const result = await send('/json')
        assert.equal(result.kind, 'response')
        assert.equal(result.kind === 'response' && result.status, 200)
        assert.equal(text(result), BODY)
        assert.equal(result.kind === 'response' && result.headers.get('etag'), '"v1"')
        assert.equal(result.kind === 'response' && result.headers.get('link'), '<a>; rel="x", <b>; rel="next"')
      })

      it('a compressed answer is decompressed (gzip, deflate, br), and the limit bounds what it decompresses to; through a given fetch it is not used, as it cannot be proven whole', async () => {
        for (const path of ['/gzip', '/deflate', '/br']) {
          const result = await send(path)
          // fetch decompresses a stream cut before its end as if whole, and shows no compressed byte to check
          if (name === 'fetch')
            assert.deepEqual(result.kind === 'network' && result.reach, { stage: 'body', status: 200, received: BODY.length + 1, declared: null, undecodable: null, compressed: { encoding: path.slice(1), end: 'unchecked' } }, path)
          else assert.equal(text(result), BODY, path)
        }
        assert.equal((await send('/bomb', { maxBytes: 10_000 })).kind, 'too_large')
      })

      it('a body over the limit is too_large, with a Content-Length or chunked', async () => {
        for (const path of ['/large', '/large-chunked']) {
          const result = await send(path, { maxBytes: 4000 })
          assert.deepEqual([result.kind, 'status' in result && result.status], ['too_large', 200], path)
        }
        assert.equal(text(await send('/large', { maxBytes: 5000 }))?.length, 5000)
      })

      it('a redirect is an answer, never followed', async () => {
        const result = await send('/redirect')
        assert.deepEqual([result.kind, result.kind === 'response' && result.status, result.kind === 'response' && result.headers.get('location')], ['response', 302, 'http://127.0.0.1:1/elsewhere'])
      })

      it('a body that is not UTF-8 has no text', async () => {
        const result = await send('/latin1')
        assert.deepEqual([result.kind, result.kind === 'response' && result.body], ['response', null])
      })

      it('the time limit covers the whole body; the caller’s signal cancels; a body cut short is a network failure', async () => {
        assert.equal((await send('/slow-body', { timeoutMs: 300 })).kind, 'timeout')
        const controller = new AbortController()
        setTimeout(() => controller.abort(), 100)
        assert.equal((await send('/slow-body', { signal: controller.signal })).kind, 'aborted')
        assert.equal((await send('/json', { signal: AbortSignal.abort() })).kind, 'aborted')
        assert.equal((await send('/cut')).kind, 'network')
      })

      it('a refused connection is a network failure naming its code', async () => {
        // a port that was free a moment ago (fetch refuses port 1 outright, as a "bad port")
        const closed = await startUpstream(() => undefined)
        await closed.close()
        const result = await client.send({ url: new URL(`http://127.0.0.1:${closed.port}/x`), method: 'GET', headers: {}, timeoutMs: 2000, maxBytes: 100 })
        assert.deepEqual([result.kind, result.kind === 'network' && result.detail], ['network', 'ECONNREFUSED'])
      })

      it('https: a certificate the machine does not trust is refused, naming why; one it trusts (NODE_EXTRA_CA_CERTS) is answered', async () => {
        const tls = await selfSignedServer()
        try {
          const refused = await client.send({ url: new URL(`${tls.origin}/x`), method: 'GET', headers: {}, timeoutMs: 2000, maxBytes: 1000 })
          assert.equal(refused.kind, 'network')
          assert.match(refused.kind === 'network' ? refused.detail : '', /SELF_SIGNED|self.signed|CERT/i)
          // the handshake failed before the connection was made: the request was never sent (fetch cannot tell)
          assert.deepEqual(refused.kind === 'network' && refused.reach, name === 'fetch' ? null : { stage: 'connecting' })
          // the same request from a process that trusts the certificate, as an operator of a private CA would run it
          const trusted = await answerIn(name, tls.origin, { NODE_EXTRA_CA_CERTS: tls.certFile })
          assert.deepEqual(trusted, { kind: 'response', status: 200, body: '{"tls":true}' })
        } finally {
          await tls.close()
        }
      })

      it('sends the method, the headers and the body as given', async () => {
        const result = await send('/echo', { method: 'PATCH', body: '{"role":"é"}' })
        const echoed = JSON.parse(text(result) ?? 'null') as { method: string; body: string; headers: Record<string, string> }
        assert.equal(echoed.method, 'PATCH')
        assert.equal(echoed.body, '{"role":"é"}')
        assert.equal(echoed.headers['content-type'], 'application/json')
        assert.equal(echoed.headers['content-length'], String(Buffer.byteLength('{"role":"é"}')))
        // node:http asks for a compressed answer (and checks its stream's end); a given fetch, which cannot, for none
        if (name === 'fetch') assert.equal(echoed.headers['accept-encoding'], 'identity')
        else assert.match(echoed.headers['accept-encoding'] ?? '', /gzip/)
      })
    })
  }
})

/** An HTTPS server on 127.0.0.1 with a certificate made for this test (openssl), trusted by nobody. */
async function selfSignedServer(): Promise<{ origin: string; certFile: string; close(): Promise<void> }> {
  const dir = await createTempDir('warrant-tls-')
  const certFile = join(dir.path, 'cert.pem')
  const keyFile = join(dir.path, 'key.pem')
  await run('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'])
  const server = createHttpsServer({ cert: readFileSync(certFile), key: readFileSync(keyFile) }, (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end('{"tls":true}')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    origin: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    certFile,
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await dir.drop()
    },
  }
}

/** One GET by the named client, sent from a child process with `env` added; what it answered. */
async function answerIn(client: string, origin: string, env: Record<string, string>): Promise<unknown> {
  const script = `
    import { createNodeClient } from ${JSON.stringify(new URL('../../../src/connectors/http/node-client.ts', import.meta.url).pathname)}
    import { createFetchClient } from ${JSON.stringify(new URL('../../../src/connectors/http/fetch-client.ts', import.meta.url).pathname)}
    const client = ${client === 'fetch' ? 'createFetchClient(globalThis.fetch)' : 'createNodeClient()'}
    const result = await client.send({ url: new URL(${JSON.stringify(`${origin}/x`)}), method: 'GET', headers: {}, timeoutMs: 5000, maxBytes: 1000 })
    client.close()
    process.stdout.write(JSON.stringify(result.kind === 'response' ? { kind: result.kind, status: result.status, body: result.body } : result))
  `
  const { stdout } = await run(process.execPath, ['--import', TSX_LOADER, '--input-type=module', '-e', script], { env: { ...process.env, ...env } })
  return JSON.parse(stdout)
}


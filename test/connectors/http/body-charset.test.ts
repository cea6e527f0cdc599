import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createHttpConnector } from '../../../src/connectors/http/index.js'
import type { Connector } from '../../../src/connectors/connector.js'
import { httpResource } from './fixtures.js'
import { startUpstream, type TestUpstream } from './upstream-server.js'

/**
 * A body's declared charset and content type are read, not assumed. A record declared
 * `application/json; charset=iso-8859-1` whose bytes also read as UTF-8 was read as UTF-8 without a word (latin-1
 * "pausedÃ©" taken as "pausedé"); a latin-1 one that is not UTF-8, a UTF-16 one and a proxy's 200 `text/html`
 * login page were all only "not JSON". Now a declared charset other than UTF-8 is read only where its bytes are
 * ASCII (every ASCII-compatible charset and UTF-8 agree), else refused naming it, and "not JSON" says what came.
 */
const record = (id: string, status: string) => JSON.stringify({ id, status, amount: 1, version: 2 })

describe('an answer’s charset and content type', () => {
  let upstream: TestUpstream
  before(async () => {
    upstream = await startUpstream((req, res) => {
      const send = (type: string, body: Buffer) => {
        res.writeHead(200, { 'content-type': type, 'content-length': body.length })
        res.end(body)
      }
      const id = req.url.pathname.split('/').pop()!
      switch (id) {
        case 'latin1-as-utf8':
          // latin-1 bytes of "pausedÃ©": C3 A9 also reads as the UTF-8 of "é"
          return send('application/json; charset=iso-8859-1', Buffer.from(record(id, 'pausedÃ©'), 'latin1'))
        case 'latin1':
          return send('application/json; charset=ISO-8859-1', Buffer.from(record(id, 'café'), 'latin1'))
        case 'latin1-ascii':
          return send('application/json; charset="iso-8859-1"', Buffer.from(record(id, 'paused'), 'latin1'))
        case 'utf8-declared':
          return send('application/json; charset=UTF-8', Buffer.from(record(id, 'café')))
        case 'utf16':
          return send('application/json; charset=utf-16le', Buffer.from(record(id, 'paused'), 'utf16le'))
        case 'items':
        case 'login':
          return send('text/html; charset=utf-8', Buffer.from('<!doctype html><title>Sign in</title><form action="/login">'))
      }
      res.writeHead(404)
      res.end()
    })
  })
  after(() => upstream.close())

  for (const [name, options] of [
    ['node:http', {}],
    ['fetch', { fetch: globalThis.fetch }],
  ] as const) {
    describe(name, () => {
      const make = () => createHttpConnector({ ...options, resource: httpResource({ sources: [{ name: 'main', base_url: upstream.origin }] }) })
      const failure = async (conn: Connector, id: string) => {
        const read = await conn.readByIds([id])
        assert.equal(read.failed.length, 1, `${id}: ${JSON.stringify(read)}`)
        return read.failed[0]!
      }

      it('a non-UTF-8 charset with bytes outside ASCII is refused naming the charset, never read as UTF-8', async () => {
        const conn = make()
        for (const id of ['latin1-as-utf8', 'latin1']) {
          const failed = await failure(conn, id)
          assert.equal(failed.status, 200)
          assert.match(failed.message, /^source "main" answered 200 with a body that cannot be read as text: it declares charset=iso-8859-1 and holds bytes outside ASCII/i, id)
        }
        const utf16 = await failure(conn, 'utf16')
        assert.match(utf16.message, /declares charset=utf-16le/)
        await conn.close()
      })

      it('a non-UTF-8 charset over ASCII bytes, and a declared UTF-8, are read', async () => {
        const conn = make()
        const read = await conn.readByIds(['latin1-ascii', 'utf8-declared'])
        assert.deepEqual(read.failed, [])
        assert.equal(read.records.get('utf8-declared')?.fields.status, 'café')
        assert.equal(read.records.get('latin1-ascii')?.fields.status, 'paused')
        await conn.close()
      })

      it('a 200 text/html page, and a body without text as declared, say what came on a read, a list page and a write', async () => {
        const conn = make()
        const read = await failure(conn, 'login')
        assert.equal(read.message, 'source "main" answered 200 with an HTML page of 59 bytes, not JSON (a sign-in or error page of a proxy in front of it?)')
        const session = await conn.openSession()
        const page = await session.readPage({ source: 'main', filter: {}, position: null, pageSize: 10 })
        await session.close()
        assert.equal(page.kind, 'refused')
        assert.equal(page.kind === 'refused' && page.status, 200)
        assert.match(page.kind === 'refused' ? page.message : '', /^source "main" answered 200 with an HTML page of 59 bytes, not JSON/)
        const written = await conn.write({ id: 'login', expectedVersion: '1', set: { status: 'paused' }, precondition: {}, http: { method: 'PATCH', path: '/items/login', body: { status: 'paused' }, ifMatch: false } })
        assert.equal(written.kind, 'unknown')
        assert.match(written.kind === 'unknown' ? written.message : '', /^source "main" answered 200 with an HTML page of 59 bytes, not JSON \(.*\); the write may or may not have happened$/)
        // a body without text as declared says why
        const latin = await conn.write({ id: 'latin1', expectedVersion: '1', set: { status: 'paused' }, precondition: {}, http: { method: 'PATCH', path: '/items/latin1', body: { status: 'paused' }, ifMatch: false } })
        assert.match(latin.kind === 'unknown' ? latin.message : '', /declares charset=iso-8859-1/i)
        await conn.close()
      })
    })
  }
})

import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { deniedScrubber, deniedValuesOf } from '../../../src/connectors/http/denied-values.js'
import { createHttpConnector } from '../../../src/connectors/http/index.js'
import type { HttpConnectorConfig } from '../../../src/config/schema.js'
import { httpResource } from './fixtures.js'
import { sendJson, startUpstream, type TestUpstream } from './upstream-server.js'

/** A resource whose denied `secret` lives at `meta.Token` in the upstream's records. */
const WITH_SECRET = { fields: { id: 'string', status: 'string', amount: 'number', version: 'integer', secret: 'string', pin: 'string' }, denied_fields: ['secret', 'pin'] }

function ctxOf(origin = 'http://127.0.0.1:1') {
  const resource = httpResource({ sources: [{ name: 'main', base_url: origin }], field_paths: { secret: 'meta.Token' } }, WITH_SECRET)
  return { resource, config: resource.connector as HttpConnectorConfig }
}

describe('denied values in quoted upstream answers', () => {
  it('a JSON answer has the value under every key naming a denied field replaced, at any depth and in any case', () => {
    const scrub = deniedScrubber(ctxOf())
    const body = JSON.stringify({ error: 'bad', received: { id: 'r1', meta: { token: 'tok-abc-123' }, SECRET: 'x', pin: ['1', '2'] } })
    assert.equal(scrub.text(body), JSON.stringify({ error: 'bad', received: { id: 'r1', meta: { token: '[redacted]' }, SECRET: '[redacted]', pin: '[redacted]' } }))
    assert.deepEqual(scrub.json(JSON.parse(body)), JSON.parse(scrub.text(body)!))
  })

  it('an answer holding no denied value is quoted as sent, formatting included', () => {
    const scrub = deniedScrubber(ctxOf(), ['tok-abc-123'])
    const body = '{ "error": "status must be one of active, paused" }'
    assert.equal(scrub.text(body), body)
    const parsed = JSON.parse(body) as unknown
    assert.equal(scrub.json(parsed), parsed)
  })

  it('the record’s own denied values are replaced wherever they appear, as written and JSON-escaped', () => {
    const scrub = deniedScrubber(ctxOf(), ['tok "abc" 123'])
    assert.equal(scrub.text('refused: tok "abc" 123 is not allowed'), 'refused: [redacted] is not allowed')
    assert.equal(scrub.text('<p>{"note":"tok \\"abc\\" 123"}</p>'), '<p>{"note":"[redacted]"}</p>')
    assert.deepEqual(scrub.json({ message: 'value tok "abc" 123 rejected' }), { message: 'value [redacted] rejected' })
  })

  it('a denied value too short to replace safely, found in a non-JSON answer, means no quote at all', () => {
    const scrub = deniedScrubber(ctxOf(), ['4711'])
    assert.equal(scrub.text('pin 4711 is wrong'), null)
    // inside a longer word or number it is not that value
    assert.equal(scrub.text('error 47110 at line 3'), 'error 47110 at line 3')
    assert.deepEqual(scrub.json({ message: 'pin 4711 is wrong', code: 4711, other: 47110 }), { message: '[redacted]', code: '[redacted]', other: 47110 })
  })

  it('the values of the record being written: denied fields of its representation (at their paths) and of its fields', () => {
    const ctx = ctxOf()
    const record = { fields: { id: 'r1', secret: 'tok-abc-123', pin: 4711 }, representation: { id: 'r1', meta: { Token: 'tok-abc-123', other: 'kept' }, pin: { a: ['deep-one'], b: true, c: '' }, secret: 'not-its-path' } }
    assert.deepEqual([...deniedValuesOf(ctx, record)].sort(), ['4711', 'deep-one', 'tok-abc-123'])
    assert.deepEqual(deniedValuesOf(ctx, undefined), [])
  })
})

describe('denied values in the http connector’s messages', () => {
  let upstream: TestUpstream
  before(async () => {
    upstream = await startUpstream((req, res) => {
      // reads and writes refused with an answer that echoes the record, denied fields included
      const echo = { id: 'r1', status: 'active', version: 3, meta: { Token: 'tok-abc-123' }, pin: '4711' }
      if (req.method === 'GET') return sendJson(res, 400, { error: 'cannot serve', record: echo })
      res.writeHead(422, { 'content-type': 'text/plain' })
      res.end(`invalid: ${req.body}`)
    })
  })
  after(() => upstream.close())

  const connector = () => createHttpConnector({ resource: ctxOf(upstream.origin).resource })

  it('a refused read by id quotes the answer with the denied keys replaced', async () => {
    const result = await connector().readByIds(['r1'])
    const message = result.failed[0]?.message ?? ''
    assert.match(message, /answered 400: .*"Token":"\[redacted\]"/)
    assert.doesNotMatch(message, /tok-abc-123|4711/)
  })

  it('a replacing write refused with a plain-text echo: the record’s denied values are replaced, or the body is not quoted', async () => {
    const current = { id: 'r1', version: '3', fields: { id: 'r1', status: 'active', amount: 1, version: 3, secret: 'tok-abc-123', pin: '4711' }, representation: { id: 'r1', status: 'active', amount: 1, version: 3, meta: { Token: 'tok-abc-123' }, pin: '4711' } }
    const write = (pin: string) =>
      connector().write({
        id: 'r1',
        expectedVersion: '3',
        set: { status: 'paused' },
        precondition: {},
        current: { ...current, fields: { ...current.fields, pin }, representation: { ...current.representation, pin } },
        http: { method: 'PUT', path: '/items/r1', ifMatch: false, style: 'replace', version: { in: 'header', name: 'If-Match' } },
      })
    const long = await write('4711-long-enough')
    assert.equal(long.kind, 'rejected')
    assert.ok(long.kind === 'rejected' && !('body' in long))
    assert.match(long.kind === 'rejected' ? long.message : '', /rejected the write with 422: invalid: .*\[redacted\]/)
    assert.doesNotMatch(JSON.stringify(long), /tok-abc-123|4711/)

    const short = await write('4711')
    assert.equal(short.kind === 'rejected' ? short.message : '', `source "main" rejected the write with 422: (body not quoted: it may hold a denied field's value)`)
  })
})

import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createHttpConnector } from '../../../src/connectors/http/index.js'
import { readPath } from '../../../src/connectors/http/json-path.js'
import { nextLinkOf, parseLinkHeader } from '../../../src/connectors/http/link-header.js'
import { parseRetryAfter } from '../../../src/connectors/http/retry-after.js'
import { assertRelativePath, blockedHostReason, isWithinBase, renderPathTemplate, resolveUnderBase } from '../../../src/connectors/http/url-guard.js'
import { httpResource } from './fixtures.js'

const build = (base_url: string, connector: Record<string, unknown> = {}) =>
  createHttpConnector({ resource: httpResource({ sources: [{ name: 'shard-1', base_url, plain_http: true }], ...connector }) })

describe('base URL guard', () => {
  for (const url of [
    'http://169.254.169.254/latest/meta-data',
    'http://169.254.1.1',
    'http://2852039166/', // 169.254.169.254 as one number
    'http://0xa9.0xfe.0xa9.0xfe/',
    'http://metadata.google.internal/computeMetadata/v1',
    'http://METADATA.GOOGLE.INTERNAL./',
    'http://100.100.100.200/latest',
    'http://[fe80::1]/',
    'http://[febf::1]/',
    'http://[::ffff:169.254.169.254]/',
    'http://[fd00:ec2::254]/',
  ]) {
    it(`refuses ${url} at construction, naming the source`, () => {
      assert.throws(() => build(url), (error: Error & { code?: string }) => {
        assert.equal(error.code, 'invalid_request')
        assert.match(error.message, /^connector\.sources\[0\]\.base_url: points to .*(link-local|metadata).*\(source "shard-1"\)/)
        return true
      })
    })
  }

  for (const url of ['http://127.0.0.1:1', 'https://api.example.com/v1', 'http://[::1]:8080', 'http://[fec0::1]/', 'http://169.253.0.1']) {
    it(`accepts ${url}`, () => {
      assert.doesNotThrow(() => build(url))
    })
  }

  it('refuses credentials, queries and non-http schemes in a base URL', () => {
    assert.throws(() => build('https://user:pw@api.example.com'), /must not contain credentials/)
    assert.throws(() => build('https://api.example.com/?token=x'), /query or fragment/)
    assert.throws(() => build('file:///etc/passwd'), /http or https/)
  })

  it('refuses path templates that are not plain relative paths', () => {
    assert.throws(() => build('https://api.example.com', { get: { path: '/items/{id}/{other}' } }), /\{id\} and no other placeholder/)
    assert.throws(() => build('https://api.example.com', { get: { path: '/items' } }), /\{id\}/)
    assert.throws(() => build('https://api.example.com', { list: { path: '/../items', pagination: { style: 'cursor' } } }), /dot segment/)
    assert.throws(() => build('https://api.example.com', { list: { path: '/items/{x}', pagination: { style: 'cursor' } } }), /placeholders/)
  })

  it('refuses a source declared twice', () => {
    assert.throws(
      () =>
        createHttpConnector({
          resource: httpResource({
            sources: [
              { name: 'a', base_url: 'https://one.example' },
              { name: 'a', base_url: 'https://two.example' },
            ],
          }),
        }),
      /declared twice/,
    )
  })

  it('blockedHostReason leaves ordinary hosts alone', () => {
    assert.equal(blockedHostReason('api.example.com'), null)
    assert.equal(blockedHostReason('[2001:db8::1]'), null)
  })
})

describe('paths', () => {
  it('renders template values as single encoded segments', () => {
    assert.equal(renderPathTemplate('/items/{id}', { id: '../admin' }), '/items/..%2Fadmin')
    assert.equal(renderPathTemplate('/items/{id}', { id: '//evil.example' }), '/items/%2F%2Fevil.example')
    assert.throws(() => renderPathTemplate('/items/{id}', { id: '..' }), /path segment/)
    assert.throws(() => renderPathTemplate('/items/{id}', {}), /no value/)
  })

  it('keeps resolved URLs under the base path', () => {
    const base = new URL('https://api.example.com/v1/')
    assert.equal(resolveUnderBase(base, '/items', [['a', 'b c']]).href, 'https://api.example.com/v1/items?a=b+c')
    assert.throws(() => resolveUnderBase(base, '/items/%2E%2E/x'), /dot segment/)
    assert.throws(() => resolveUnderBase(base, '/items/{id}'), /does not stay under/)
    assert.throws(() => assertRelativePath('/a/b\\c'), /backslash/)
  })

  it('isWithinBase compares origin and base path', () => {
    const base = new URL('https://api.example.com/v1')
    assert.equal(isWithinBase(base, new URL('https://api.example.com/v1/items?page=2')), true)
    assert.equal(isWithinBase(base, new URL('https://api.example.com/v10/items')), false)
    assert.equal(isWithinBase(base, new URL('https://api.example.com.evil.example/v1/items')), false)
    assert.equal(isWithinBase(base, new URL('http://api.example.com/v1/items')), false)
    assert.equal(isWithinBase(base, new URL('https://api.example.com:444/v1/items')), false)
  })
})

describe('small parsers', () => {
  it('parses Link headers, commas in URLs included', () => {
    const header = '<https://h/items?page=1&f=a,b>; rel="prev first", <https://h/items?page=3&f=a,b>; rel=next, <https://h/items?page=9>; rel="last"'
    assert.equal(nextLinkOf(header), 'https://h/items?page=3&f=a,b')
    assert.deepEqual(parseLinkHeader(header)[0]?.rels, ['prev', 'first'])
    assert.equal(nextLinkOf('<https://h/items?page=9>; rel="last"'), null)
    assert.equal(nextLinkOf(null), null)
  })

  it('parses Retry-After as seconds or an HTTP date', () => {
    const now = Date.parse('Wed, 21 Oct 2015 07:27:00 GMT')
    assert.equal(parseRetryAfter('120', now), 120)
    assert.equal(parseRetryAfter('Wed, 21 Oct 2015 07:28:00 GMT', now), 60)
    assert.equal(parseRetryAfter('Wed, 21 Oct 2015 07:20:00 GMT', now), 0)
    assert.equal(parseRetryAfter('soon', now), null)
    assert.equal(parseRetryAfter('-5', now), null)
    assert.equal(parseRetryAfter(null, now), null)
  })

  it('reads dotted paths through objects and arrays, own properties only', () => {
    assert.equal(readPath({ a: { b: [{ c: 1 }] } }, 'a.b.0.c'), 1)
    assert.deepEqual(readPath([1], ''), [1])
    assert.equal(readPath({ a: 1 }, 'a.b'), undefined)
    assert.equal(readPath({}, 'constructor'), undefined)
    assert.equal(readPath({}, '__proto__'), undefined)
  })
})

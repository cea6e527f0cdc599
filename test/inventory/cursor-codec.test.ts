import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { isWarrantError } from '../../src/contract/index.js'
import { createCursorCodec, queryFingerprint, type WalkCursorState } from '../../src/inventory/index.js'
import { TEST_CURSOR_KEY, manualClock } from './helpers.js'

const query = { resource: 'subscriptions', filter: { status: 'past_due' }, fields: ['id', 'status'] }
const fp = queryFingerprint(query, 'billing-prod')

const state: WalkCursorState = {
  fingerprint: fp,
  snapshot: 'tx:42',
  consistent: true,
  sources: [
    { source: 'eu', position: null, finished: true, gaps: [{ code: 'RESULT_LIMIT_REACHED', limit: 1000 }, { code: 'SHAPE_MISMATCH', count: 3, absent: ['name'], mistyped: [], idless: { field: 'id', count: 2 } }] },
    { source: 'us', position: 'opaque-position-ü', finished: false, gaps: [] },
  ],
}

function rejectsAs(fn: () => unknown, reason: string, name: string): void {
  assert.throws(
    fn,
    (e: unknown) => isWarrantError(e) && e.code === 'invalid_cursor' && (e.details as { reason: string }).reason === reason,
    name,
  )
}

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'

describe('cursor codec', () => {
  it('round-trips the walk state: positions per source, finished sources, gaps, snapshot, fingerprint', () => {
    const codec = createCursorCodec({ key: TEST_CURSOR_KEY })
    const token = codec.encode(state)
    assert.match(token, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/)
    const back = codec.decode(token, fp)
    assert.deepEqual(
      { fingerprint: back.fingerprint, snapshot: back.snapshot, consistent: back.consistent, sources: back.sources },
      state,
    )
    assert.equal(back.expired, false)
    assert.equal(back.maxAgeMs, 60 * 60 * 1000)
  })

  it('a cursor signed with another key is forged → invalid_cursor', () => {
    const token = createCursorCodec({ key: 'another-key-another-key-another-key!' }).encode(state)
    rejectsAs(() => createCursorCodec({ key: TEST_CURSOR_KEY }).decode(token, fp), 'forged_or_altered', 'other key')
  })

  it('a hand-made cursor (payload edited, signature kept) is forged → invalid_cursor', () => {
    const codec = createCursorCodec({ key: TEST_CURSOR_KEY })
    const [payload, signature] = codec.encode(state).split('.') as [string, string]
    const decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { src: { f: boolean }[] }
    for (const s of decoded.src) s.f = true // "everything is done"
    const edited = Buffer.from(JSON.stringify(decoded)).toString('base64url')
    rejectsAs(() => codec.decode(`${edited}.${signature}`, fp), 'forged_or_altered', 'edited payload')
  })

  it('any single altered character → invalid_cursor', () => {
    const codec = createCursorCodec({ key: TEST_CURSOR_KEY })
    const token = codec.encode(state)
    for (let i = 0; i < token.length; i++) {
      const c = token[i]!
      const replacement = c === '.' ? 'A' : BASE64URL[(BASE64URL.indexOf(c) + 1) % 64]!
      const altered = token.slice(0, i) + replacement + token.slice(i + 1)
      assert.throws(() => codec.decode(altered, fp), (e: unknown) => isWarrantError(e) && e.code === 'invalid_cursor', `position ${i}`)
    }
  })

  it('a truncated cursor, at any length → invalid_cursor', () => {
    const codec = createCursorCodec({ key: TEST_CURSOR_KEY })
    const token = codec.encode(state)
    for (let n = 0; n < token.length; n++)
      assert.throws(() => codec.decode(token.slice(0, n), fp), (e: unknown) => isWarrantError(e) && e.code === 'invalid_cursor', `length ${n}`)
    rejectsAs(() => codec.decode(token.slice(0, -5), fp), 'truncated', 'short signature')
    rejectsAs(() => codec.decode(token.split('.')[0]!, fp), 'malformed', 'no signature')
  })

  it('garbage → invalid_cursor, never an exception of another kind', () => {
    const codec = createCursorCodec({ key: TEST_CURSOR_KEY })
    for (const junk of ['', '.', 'a.b.c', 'not a cursor', '%%%.%%%', 'eyJ9.' + 'A'.repeat(43), '\u0000'])
      assert.throws(() => codec.decode(junk, fp), (e: unknown) => isWarrantError(e) && e.code === 'invalid_cursor', JSON.stringify(junk))
  })

  it('a cursor of another query (resource, filter, fields or environment) → invalid_cursor naming it', () => {
    const codec = createCursorCodec({ key: TEST_CURSOR_KEY })
    const token = codec.encode(state)
    const others = [
      queryFingerprint({ ...query, resource: 'invoices' }, 'billing-prod'),
      queryFingerprint({ ...query, filter: { status: 'active' } }, 'billing-prod'),
      queryFingerprint({ ...query, fields: ['id'] }, 'billing-prod'),
      queryFingerprint(query, 'billing-staging'),
    ]
    for (const other of others) {
      assert.throws(
        () => codec.decode(token, other),
        (e: unknown) => isWarrantError(e) && e.code === 'invalid_cursor' && /another query/.test(e.message),
      )
      rejectsAs(() => codec.decode(token, other), 'other_query', other)
    }
  })

  it('the query fingerprint ignores key order, field order and page size', () => {
    const a = queryFingerprint({ resource: 'r', filter: { a: 1, b: { gte: 2, lt: 5 } }, fields: ['x', 'y'] }, 'e')
    const b = queryFingerprint({ resource: 'r', filter: { b: { lt: 5, gte: 2 }, a: 1 }, fields: ['y', 'x', 'y'] }, 'e')
    assert.equal(a, b)
    assert.notEqual(a, queryFingerprint({ resource: 'r', filter: { a: 1, b: { gte: 2, lt: 5 } } }, 'e'))
  })

  it('an old cursor decodes flagged expired (so the walk reports CURSOR_EXPIRED instead of restarting)', () => {
    const clock = manualClock()
    const codec = createCursorCodec({ key: TEST_CURSOR_KEY, clock })
    const token = codec.encode(state)
    clock.advance(60 * 60 * 1000)
    assert.equal(codec.decode(token, fp).expired, false)
    clock.advance(1)
    assert.equal(codec.decode(token, fp).expired, true)
  })

  it('the maximum age is carried by the cursor', () => {
    const clock = manualClock()
    const token = createCursorCodec({ key: TEST_CURSOR_KEY, clock, maxAgeMs: 1000 }).encode(state)
    clock.advance(1001)
    assert.equal(createCursorCodec({ key: TEST_CURSOR_KEY, clock }).decode(token, fp).expired, true)
  })

  it('refuses a short key', () => {
    assert.throws(() => createCursorCodec({ key: 'short' }), TypeError)
  })
})

import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { describe, it } from 'node:test'
import canonicalize from 'canonicalize'
import fc from 'fast-check'
import { canonicalJson, createListDigest, digestOf, sha256 } from '../../src/contract/index.js'

/** Rebuilds a JSON value with every object's keys in a shuffled order. */
function reorder(value: unknown, rng: () => number): unknown {
  if (Array.isArray(value)) return value.map((v) => reorder(v, rng))
  if (value && typeof value === 'object') {
    const entries = Object.entries(value)
    for (let i = entries.length - 1; i > 0; i--) {
      const j = Math.floor(rng() * (i + 1))
      ;[entries[i], entries[j]] = [entries[j]!, entries[i]!]
    }
    return Object.fromEntries(entries.map(([k, v]) => [k, reorder(v, rng)]))
  }
  return value
}

const json = fc.jsonValue({ maxDepth: 4 })

describe('canonical JSON (RFC 8785)', () => {
  it('key order does not matter', () => {
    fc.assert(
      fc.property(json, fc.integer(), (value, seed) => {
        let s = seed
        const rng = () => ((s = (s * 1103515245 + 12345) & 0x7fffffff) / 0x80000000)
        const shuffled = reorder(value, rng)
        assert.equal(canonicalJson(shuffled), canonicalJson(value))
        assert.equal(digestOf(shuffled), digestOf(value))
      }),
      { numRuns: 300 },
    )
  })

  it('a flat object (the audit rows, a call summary) is written exactly as the canonicalize library writes it, or refused where it refuses', () => {
    // strings with lone surrogates, numbers that are not finite, -0, undefined members, keys like "__proto__"
    const text = fc.oneof(fc.string({ unit: 'binary' }), fc.constantFrom('__proto__', 'toString', '1', '', '\ud800', 'a\udc00b'))
    const member = fc.oneof(text, fc.double(), fc.integer(), fc.boolean(), fc.constant(null), fc.constant(undefined))
    fc.assert(
      fc.property(fc.dictionary(text, member, { maxKeys: 12 }), (value) => {
        let expected: string | Error
        try {
          expected = canonicalize(value) as string
        } catch (error) {
          expected = error as Error
        }
        if (expected instanceof Error) assert.throws(() => canonicalJson(value))
        else assert.equal(canonicalJson(value), expected)
      }),
      { numRuns: 2000 },
    )
  })

  it('is valid JSON that parses back to the same value', () => {
    fc.assert(
      fc.property(json, (value) => {
        const text = canonicalJson(value)
        assert.equal(canonicalJson(JSON.parse(text)), text)
      }),
      { numRuns: 300 },
    )
  })

  it('sorts keys by UTF-16 code units (RFC 8785 §3.2.3 example)', () => {
    const value = { '\u20ac': 'Euro Sign', '\r': 'Carriage Return', '\ufb33': 'Hebrew Letter Dalet With Dagesh', '1': 'One', '\ud83d\ude00': 'Emoji: Grinning Face', '\u0080': 'Control', '\u00f6': 'Latin Small Letter O With Diaeresis' }
    // Object.keys() would put the integer-like "1" first, so read the order from the text itself.
    const text = canonicalJson(value)
    const order = ['\r', '1', '\u0080', '\u00f6', '\u20ac', '\ud83d\ude00', '\ufb33'].map((k) => text.indexOf(`${JSON.stringify(k)}:`))
    assert.ok(order.every((at) => at >= 0))
    assert.deepEqual(order, [...order].sort((x, y) => x - y))
    assert.ok(text.startsWith('{"\\r":"Carriage Return","1":"One","\u0080":"Control"'))
  })

  it('formats numbers as ECMAScript does (RFC 8785 §3.2.2.3 examples)', () => {
    const cases: [number, string][] = [
      [0, '0'],
      [-0, '0'],
      [1, '1'],
      [4.5, '4.5'],
      [0.002, '0.002'],
      [1e-7, '1e-7'],
      [0.000001, '0.000001'],
      [1e21, '1e+21'],
      [1e30, '1e+30'],
      [123456789012345680000, '123456789012345680000'],
      [333333333.33333329, '333333333.3333333'],
      [9007199254740992, '9007199254740992'],
      [5e-324, '5e-324'],
      [1.7976931348623157e308, '1.7976931348623157e+308'],
      [-1.5, '-1.5'],
    ]
    for (const [n, text] of cases) assert.equal(canonicalJson(n), text, String(n))
    assert.equal(canonicalJson({ numbers: [333333333.33333329, 1e30, 4.5, 2e-3, 0.000001] }), '{"numbers":[333333333.3333333,1e+30,4.5,0.002,0.000001]}')
  })

  it('escapes strings minimally (RFC 8785 §3.2.2.2)', () => {
    assert.equal(canonicalJson('\u20ac$\u000f\nA\'B"\\\\"/'), '"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"')
    assert.equal(canonicalJson({ literals: [null, true, false] }), '{"literals":[null,true,false]}')
  })

  it('refuses what JSON cannot represent, instead of producing a wrong digest', () => {
    for (const bad of [NaN, Infinity, undefined, () => 1, { a: () => 1 }, [() => 1], { nested: [{ f: () => 1 }] }, 10n, '\ud800'])
      assert.throws(() => canonicalJson(bad), String(bad))
  })

  it('follows toJSON like JSON.stringify (a Date is its ISO string)', () => {
    assert.equal(canonicalJson({ at: new Date(0) }), '{"at":"1970-01-01T00:00:00.000Z"}')
  })
})

describe('digests', () => {
  it('digestOf is sha256 of the canonical JSON, prefixed', () => {
    const value = { b: [1, 2], a: 'x' }
    assert.equal(digestOf(value), `sha256:${createHash('sha256').update('{"a":"x","b":[1,2]}').digest('hex')}`)
    assert.equal(sha256('abc'), 'sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
  })

  it('createListDigest equals digestOf of the array, for any list', () => {
    fc.assert(
      fc.property(fc.array(json, { maxLength: 20 }), (members) => {
        const list = createListDigest()
        for (const m of members) list.add(m)
        assert.equal(list.finish(), digestOf(members))
      }),
      { numRuns: 300 },
    )
  })

  it('createListDigest equals digestOf for long lists of selection entries (any string, lone surrogates too)', () => {
    const entry = fc.record({ id: fc.string({ unit: 'binary', maxLength: 12 }), version: fc.option(fc.string({ unit: 'binary', maxLength: 6 }), { nil: null }) })
    const shaped = fc.oneof(entry, fc.record({ version: fc.string(), id: fc.string() }), fc.record({ id: fc.string(), version: fc.integer() }), fc.record({ id: fc.string(), version: fc.string(), extra: fc.string() }))
    fc.assert(
      fc.property(fc.array(shaped, { maxLength: 40 }), fc.integer({ min: 1, max: 4000 }), (members, repeat) => {
        const list = createListDigest()
        const all: unknown[] = []
        // repeated so the chunked hashing crosses its chunk boundaries
        for (let r = 0; r < Math.min(repeat, members.length === 0 ? 1 : Math.ceil(4000 / members.length)); r++) for (const m of members) (list.add(m), all.push(m))
        assert.equal(list.finish(), digestOf(all))
      }),
      { numRuns: 60 },
    )
  })

  it('the empty list digest is the digest of []', () => {
    assert.equal(createListDigest().finish(), digestOf([]))
  })

  it('different member lists have different digests (order matters)', () => {
    assert.notEqual(digestOf([{ id: 'a' }, { id: 'b' }]), digestOf([{ id: 'b' }, { id: 'a' }]))
  })
})

import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { canonicalJson, surelySameData, surelySameJson } from '../../src/contract/index.js'

/** canonicalJson's text, or what it throws (two values that both refuse are the same to a caller keyed by it) */
const canonical = (value: unknown): string => {
  try {
    return canonicalJson(value)
  } catch (error) {
    return `throws: ${(error as Error).message}`
  }
}

describe('surelySameJson', () => {
  it('is true only where the canonical JSON texts are the same', () => {
    const leaf = fc.oneof(fc.constantFrom(null, undefined, 0, -0, 1, 1.0, NaN, Infinity, '', '1', 'a', '\ud800', true, false, 10n), fc.date({ noInvalidDate: true }))
    const value = fc.letrec((tie) => ({
      v: fc.oneof({ maxDepth: 3 }, leaf, fc.array(tie('v'), { maxLength: 3 }), fc.dictionary(fc.constantFrom('a', 'b', '0', 'toJSON', '\udc00'), tie('v'), { maxKeys: 3 })),
    })).v
    // pairs that are often alike: b a copy of a, or a value of its own
    const pair = fc.tuple(value, value, fc.boolean()).map(([a, other, copy]) => [a, copy ? copyOf(a) : other] as const)
    fc.assert(
      fc.property(pair, ([a, b]) => {
        if (surelySameJson(a, b)) assert.equal(canonical(a), canonical(b))
        // the data form: the same text, and one canonicalJson writes (sameValue treats a refusal as different)
        if (surelySameData(a, b)) {
          assert.equal(canonical(a), canonical(b))
          assert.doesNotThrow(() => canonicalJson(a))
        }
      }),
      { numRuns: 5000 },
    )
    // a JSON value rebuilt in another key order (one template rendered per target) is recognised
    fc.assert(fc.property(fc.jsonValue(), (a) => surelySameJson(a, reversed(a)) && surelySameData(a, reversed(a))), { numRuns: 2000 })
  })

  it('never calls the same values that serialise alike but differ', () => {
    const pairs: [unknown, unknown][] = [
      [{ a: NaN }, { a: null }],
      [{ a: undefined }, {}],
      [{ a: Infinity }, { a: null }],
      [['a'], { 0: 'a' }],
      [{ a: new Date(0) }, { a: '1970-01-01T00:00:00.000Z' }],
      [{ a: new Date(0) }, { a: new Date(1) }],
      [{ toJSON: () => 1 }, { toJSON: () => 2 }],
      [{ a: 1 }, { a: '1' }],
      [{ a: [1, 2] }, { a: [2, 1] }],
      [{ a: { b: 1 } }, { a: { b: 1, c: 2 } }],
    ]
    for (const [a, b] of pairs) assert.equal(surelySameJson(a, b), false, `${String(canonical(a))} and ${String(canonical(b))}`)
  })

  it('recognises the same change rendered twice, in any key order', () => {
    assert.equal(surelySameJson({ set: { collection: 'paused', reason: 'x', n: [1, { k: null }] }, precondition: { status: { eq: 'past_due' } }, http: null }, { http: null, precondition: { status: { eq: 'past_due' } }, set: { reason: 'x', n: [1, { k: null }], collection: 'paused' } }), true)
    assert.equal(surelySameJson(0, -0), true)
    // data only: what canonicalJson refuses is never the same data, even to itself
    for (const v of [Infinity, NaN, '\ud800', { a: Infinity }, [() => 1], { '\udc00': 1 }, 1n]) assert.equal(surelySameData(v, v), false, String(v))
  })
})

/** A copy with every plain object and array rebuilt (a Date, a function kept as it is). */
function copyOf(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(copyOf)
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, copyOf(v)]))
  return value
}

/** A copy with every object's keys in reverse order. */
function reversed(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversed)
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).reverse().map(([k, v]) => [k, reversed(v)]))
  return value
}

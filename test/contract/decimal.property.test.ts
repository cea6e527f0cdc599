import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { compareDecimals, decimalOf, filterMatcher, matchesFilter, type Filter } from '../../src/contract/index.js'
import { oracleCompare } from '../support/decimal-oracle.js'

/** Decimal texts as engines and JavaScript spell them: signs, padding zeros, a fraction, an exponent. */
const decimalText = fc
  .tuple(
    fc.constantFrom('', '-', '+'),
    fc.stringMatching(/^[0-9]{0,30}$/),
    fc.option(fc.stringMatching(/^[0-9]{0,25}$/), { nil: undefined }),
    fc.option(fc.integer({ min: -40, max: 40 }), { nil: undefined }),
  )
  .filter(([, whole, fraction]) => whole !== '' || (fraction ?? '') !== '')
  .map(([sign, whole, fraction, exponent]) => `${sign}${whole}${fraction === undefined ? '' : `.${fraction}`}${exponent === undefined ? '' : `e${exponent}`}`)

/** Doubles as a filter carries them, spelled by `String` (exponents included: 1e+21, 5e-324). */
const double = fc.double({ noNaN: true, noDefaultInfinity: true })

describe('decimals compared by value (property, BigInt oracle)', () => {
  it('compareDecimals orders any two decimal texts as their exact values', () => {
    fc.assert(
      fc.property(decimalText, decimalText, (a, b) => {
        assert.equal(Math.sign(compareDecimals(a, b)!), oracleCompare(a, b), `${a} vs ${b}`)
      }),
      { numRuns: 5000 },
    )
  })

  it('a text against a number spelled by String: the order of their values', () => {
    fc.assert(
      fc.property(decimalText, double, (a, d) => {
        assert.equal(Math.sign(compareDecimals(a, String(d))!), oracleCompare(a, String(d)), `${a} vs ${d}`)
      }),
      { numRuns: 5000 },
    )
  })

  it('the same value spelled two ways has one form; text that is not a decimal has none', () => {
    assert.equal(decimalOf('12345678901234567.8900'), decimalOf('1.23456789012345678900e16'))
    assert.equal(decimalOf('-0.000'), '0')
    assert.equal(compareDecimals('-0', '0'), 0)
    for (const text of ['', '.', 'e5', '1e', '1.2.3', 'n/a', '0x10', 'Infinity', 'NaN', '1,5']) {
      assert.equal(decimalOf(text), null, text)
      assert.equal(compareDecimals(text, '1'), null, text)
    }
  })
})

/** The rules' field, declared number (what the type names matter for: timestamps). */
const NUMBER = { v: 'number' }

describe('filters in memory compare exact-digit numbers by value', () => {
  // what a record shows for a numeric(40, 2) balance past a double, or a 64-bit integer past 2^53
  const wide = '12345678901234567.89'
  const big = '9007199254740993'

  it('order, equality and membership, as the engine answers them', () => {
    const cases: [unknown, Filter, boolean][] = [
      [wide, { v: { gte: 1000 } }, true],
      [wide, { v: { gt: 12345678901234568 } }, false], // the double is ...568: the row's ...567.89 is below it
      [wide, { v: { lt: 12345678901234568 } }, true],
      [`-${wide}`, { v: { lt: 0 } }, true],
      [`-${wide}`, { v: { gte: -1e17 } }, true],
      [big, { v: { gt: 9007199254740992 } }, true], // 2^53 + 1 > 2^53, though Number('9007199254740993') is 2^53
      [big, { v: { eq: 9007199254740992 } }, false],
      [big, { v: 9007199254740992 }, false],
      [big, { v: { in: [1, 9007199254740992] } }, false],
      [big, { v: { not_in: [9007199254740992] } }, true],
      ['9007199254740992', { v: { eq: 9007199254740992 } }, true],
      ['9007199254740992', { v: { in: [9007199254740992] } }, true],
      ['9007199254740992', { v: { not_in: [9007199254740992] } }, false],
      ['100.00', { v: 100 }, true],
      // text that is no decimal cannot be ordered against a number: no rule matches it
      ['n/a', { v: { gte: 0 } }, false],
      ['n/a', { v: { lt: 0 } }, false],
      // strings against strings keep code-unit order
      ['b', { v: { gt: 'a' } }, true],
      ['10', { v: { gt: '9' } }, false],
      [5, { v: { gt: 4 } }, true],
      [null, { v: { gte: 0 } }, false],
      [null, { v: { not_in: [1] } }, false],
    ]
    for (const [value, filter, expected] of cases) {
      assert.equal(matchesFilter({ v: value }, filter, NUMBER), expected, `${JSON.stringify(value)} ${JSON.stringify(filter)}`)
      assert.equal(filterMatcher(filter, NUMBER)({ v: value }), expected, `filterMatcher: ${JSON.stringify(value)} ${JSON.stringify(filter)}`)
    }
  })

  it('a bound on any side of an exact-digit value (property, BigInt oracle)', () => {
    fc.assert(
      fc.property(decimalText, double, (text, bound) => {
        const order = oracleCompare(text, String(bound))
        const record = { v: text }
        assert.equal(matchesFilter(record, { v: { lt: bound } }, NUMBER), order < 0)
        assert.equal(matchesFilter(record, { v: { lte: bound } }, NUMBER), order <= 0)
        assert.equal(matchesFilter(record, { v: { gt: bound } }, NUMBER), order > 0)
        assert.equal(matchesFilter(record, { v: { gte: bound } }, NUMBER), order >= 0)
        assert.equal(matchesFilter(record, { v: { eq: bound } }, NUMBER), order === 0)
      }),
      { numRuns: 3000 },
    )
  })
})

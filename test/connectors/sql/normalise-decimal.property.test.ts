import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { normaliseValue } from '../../../src/connectors/sql/index.js'
import { oracleCompare } from '../../support/decimal-oracle.js'

function sameValue(a: string, b: string): boolean {
  return oracleCompare(a, b) === 0
}

/** Decimal texts as engines send them: up to 30 digits before the point and 25 after, signs, padding zeros. */
const decimalText = fc
  .tuple(fc.boolean(), fc.stringMatching(/^[0-9]{1,30}$/), fc.option(fc.stringMatching(/^[0-9]{1,25}$/), { nil: undefined }))
  .map(([negative, whole, fraction]) => `${negative ? '-' : ''}${whole}${fraction === undefined ? '' : `.${fraction}`}`)

describe('a decimal read as text becomes a number only when the number is that decimal', () => {
  it('number or text, never a number of another value (property, numeric and DECIMAL text)', () => {
    fc.assert(
      fc.property(decimalText, fc.constantFrom('number', 'integer') as fc.Arbitrary<'number' | 'integer'>, (text, type) => {
        const shown = normaliseValue(type, text)
        if (typeof shown === 'string') {
          assert.equal(shown, text)
          // kept as text only where a number would not be exactly it (or an integer past 2^53)
          const n = Number(text)
          assert.ok(!sameValue(text, String(n)) || (/^-?\d+$/.test(text) && !Number.isSafeInteger(n)), `${text} could have been ${n}`)
        } else {
          assert.equal(typeof shown, 'number')
          assert.ok(sameValue(text, String(shown)), `${text} shown as ${String(shown)}`)
        }
      }),
      { numRuns: 2000 },
    )
  })

  it('every double read back from its own text is itself', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (d) => {
        const shown = normaliseValue('number', String(d))
        if (Number.isSafeInteger(d) || !Number.isInteger(d)) assert.ok(Object.is(shown, d === 0 ? 0 : d), `${d} → ${String(shown)}`)
      }),
      { numRuns: 2000 },
    )
  })
})

describe('text that is no decimal numeral is never shown as a number', () => {
  it("'' is not 0, '0x1F' is not 31: such text stays as stored", () => {
    // a SQLite column of any declared type takes any text; Number() reads these as values no row held
    for (const text of ['', ' ', '0x1F', '0b11', '0o7', 'N/A', '1_000', '١٢', 'Infinity', '-Infinity', 'NaN', '1e400', '--1', '1.2.3'])
      for (const type of ['number', 'integer'] as const) assert.equal(normaliseValue(type, text), text, `${JSON.stringify(text)} as ${type}`)
  })

  it('any text Number() reads but that is no decimal numeral (property)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 12 }), (text) => {
        const shown = normaliseValue('number', text)
        if (typeof shown === 'number') assert.ok(/^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/.test(text), `${JSON.stringify(text)} shown as ${shown}`)
      }),
      { numRuns: 3000 },
    )
  })
})

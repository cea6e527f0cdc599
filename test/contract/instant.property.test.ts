import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { clauseTypeProblem, instantOf, matchesFilter, namesInstant } from '../../src/contract/index.js'

const AT = { at: 'timestamp' }

describe('timestamps name instants, whatever their spelling', () => {
  it('toISOString and any offset of the same instant read back as it (property)', () => {
    fc.assert(
      fc.property(fc.date({ min: new Date('0002-01-01T00:00:00Z'), max: new Date('9998-12-31T23:59:59Z'), noInvalidDate: true }), fc.integer({ min: -14 * 60, max: 14 * 60 }), (date, offset) => {
        assert.equal(instantOf(date.toISOString()), date.getTime())
        // the same instant written at another offset: local wall time, then ±HH:MM
        const local = new Date(date.getTime() + offset * 60_000).toISOString().slice(0, 23)
        const zone = `${offset < 0 ? '-' : '+'}${String(Math.floor(Math.abs(offset) / 60)).padStart(2, '0')}:${String(Math.abs(offset) % 60).padStart(2, '0')}`
        assert.equal(instantOf(`${local}${zone}`), date.getTime(), `${local}${zone}`)
        // a whole-hour offset may be written as its hours alone (PostgreSQL's timestamptz::text: "…11:00:00+00")
        if (offset % 60 === 0) assert.equal(instantOf(`${local}${zone.slice(0, 3)}`), date.getTime(), `${local}${zone.slice(0, 3)}`)
      }),
      { numRuns: 2000 },
    )
  })

  it("namesInstant answers as instantOf does, for toISOString's shape with any digits and any other text (property)", () => {
    const digits = (n: number) => fc.stringMatching(new RegExp(`^[0-9]{${n}}$`))
    const isoShaped = fc
      .tuple(digits(4), digits(2), digits(2), digits(2), digits(2), digits(2), digits(3))
      .map(([y, mo, d, h, mi, s, ms]) => `${y}-${mo}-${d}T${h}:${mi}:${s}.${ms}Z`)
    fc.assert(
      fc.property(fc.oneof(isoShaped, fc.string({ maxLength: 30 }), fc.date({ noInvalidDate: true }).map((d) => d.toISOString())), (text) => {
        assert.equal(namesInstant(text), instantOf(text) !== null, text)
        assert.equal(namesInstant(text, true), instantOf(text, true) !== null, text)
      }),
      { numRuns: 5000 },
    )
    assert.equal(namesInstant('2024-02-29T00:00:00.000Z'), true)
    assert.equal(namesInstant('2023-02-29T00:00:00.000Z'), false)
    assert.equal(namesInstant('1900-02-29T00:00:00.000Z'), false)
    assert.equal(namesInstant('2000-02-29T00:00:00.000Z'), true)
    assert.equal(namesInstant(1717243200), false)
    // strict: a zoneless date-time names no instant for sure (an http API's local time); a date alone still does
    assert.equal(namesInstant('2024-06-01T09:00:00', true), false)
    assert.equal(namesInstant('2024-06-01T09:00:00'), true)
    assert.equal(namesInstant('2024-06-01', true), true)
  })

  it('dates that do not exist, and text that is no timestamp, name none', () => {
    for (const text of ['2023-02-29', '2024-04-31', '2024-13-01', '2024-06-01T24:00:00Z', '2024-06-01T10:60Z', 'yesterday', '1717236000', '', '2024-6-1', 'June 1, 2024'])
      assert.equal(instantOf(text), null, text)
    assert.equal(instantOf('2024-02-29'), Date.UTC(2024, 1, 29))
    assert.equal(instantOf('0050-01-01T00:00:00Z'), new Date('0050-01-01T00:00:00Z').getTime(), 'years 0-99 are not 1900-1999')
    assert.equal(instantOf(1717236000), null, 'an epoch number names no instant for sure (seconds? milliseconds?)')
  })

  it('SQLite spellings are UTC; in a filter a time without a zone is refused as ambiguous', () => {
    assert.equal(instantOf('2024-06-01 13:00:00'), Date.UTC(2024, 5, 1, 13))
    assert.equal(instantOf('2024-06-01 13:00:00', true), null)
    const refusal = clauseTypeProblem({ field: 'at', op: 'lt', value: '2024-06-01T10:00:00' }, 'timestamp')
    assert.match(refusal ?? '', /value "2024-06-01T10:00:00" is not an ISO-8601 timestamp \(YYYY-MM-DD, or YYYY-MM-DDTHH:MM\[:SS\[\.fff\]\] with Z or an offset/)
    assert.match(clauseTypeProblem({ field: 'at', op: 'in', value: ['2024-06-01', 'yesterday'] }, 'timestamp') ?? '', /"yesterday"/)
    assert.equal(clauseTypeProblem({ field: 'at', op: 'gte', value: '2024-06-01' }, 'timestamp'), null)
    assert.equal(clauseTypeProblem({ field: 'at', op: 'gte', value: '2024-06-01T10:00+02:00' }, 'timestamp'), null)
  })

  it('a filter compares by instant, where text order lies', () => {
    const cases: [unknown, Record<string, unknown>, boolean][] = [
      // a space sorts before "T": as text, 13:00 on the day is "before" noon
      ['2024-06-01 13:00:00', { lt: '2024-06-01T12:00:00Z' }, false],
      ['2024-06-01 11:00:00', { lt: '2024-06-01T12:00:00Z' }, true],
      // "." sorts before "Z": as text, half a second past noon is "before" it
      ['2024-06-01T12:00:00.500Z', { lt: '2024-06-01T12:00:00Z' }, false],
      ['2024-06-01T12:00:00.000Z', { eq: '2024-06-01T12:00:00Z' }, true],
      ['2024-06-01T14:00:00+02:00', { eq: '2024-06-01T12:00:00Z' }, true],
      ['2024-06-01T14:00:00+02:00', { in: ['2024-06-01T12:00:00.000Z'] }, true],
      ['2024-06-01T14:00:00+02:00', { not_in: ['2024-06-01T12:00:00.000Z'] }, false],
      ['2024-06-01T00:00:00.000Z', { gte: '2024-06-01' }, true],
      // what names no instant matches no comparison
      ['soon', { gte: '2024-06-01' }, false],
      ['soon', { lt: '2024-06-01' }, false],
      ['soon', { not_in: ['2024-06-01'] }, false],
      [1717236000, { gte: '2024-06-01' }, false],
      [null, { is_null: true }, true],
      ['2024-06-01', { is_null: false }, true],
    ]
    for (const [value, condition, expected] of cases) assert.equal(matchesFilter({ at: value }, { at: condition as never }, AT), expected, `${JSON.stringify(value)} ${JSON.stringify(condition)}`)
    // declared string, the same text compares as text
    assert.equal(matchesFilter({ at: '2024-06-01 13:00:00' }, { at: { lt: '2024-06-01T12:00:00Z' } }, { at: 'string' }), true)
  })
})

import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import pg from 'pg'
import { TIMESTAMP, TIMESTAMPTZ, utcInstantText, utcWallClock } from '../../../src/connectors/sql/utc-instant-text.js'

/**
 * A timestamptz PostgreSQL spells in UTC is read straight to ISO text; it must be, character for character, what
 * pg's own parser and `toISOString` made of it (the record a walk freezes is unchanged), and every other spelling
 * must still reach pg's parser.
 */
const pgParse = pg.types.getTypeParser(TIMESTAMPTZ, 'text') as (value: string) => unknown
const FIRST = Date.parse('0001-01-01T00:00:00Z')
const LAST = Date.parse('9999-12-31T23:59:59Z')
const viaDate = (text: string) => (pgParse(text) as Date).toISOString()

describe('utcInstantText', () => {
  it('gives the text pg’s Date gives, for every fraction length, round and odd fractions, and years 1 to 9999', () => {
    const fractions = ['', '.0', '.5', '.29', '.001', '.009', '.01', '.1', '.999', '.9999', '.999999', '.000001', '.123456', '.070', '.58', '.57', '.5799', '.28', '.14', '.035']
    for (let ms = 0; ms < 1000; ms++) fractions.push(`.${String(ms).padStart(3, '0')}`, `.${String(ms).padStart(3, '0')}999`, `.${String(ms).padStart(3, '0')}5`)
    const days = ['0001-01-01 00:00:00', '0099-12-31 23:59:59', '0100-03-01 00:00:00', '0999-06-15 12:00:00', '1900-02-28 01:02:03', '1970-01-01 00:00:00', '2000-02-29 23:59:59', '2024-06-01 12:00:00', '9999-12-31 23:59:59']
    let checked = 0
    for (const day of days)
      for (const fraction of fractions) {
        const text = `${day}${fraction}+00`
        assert.equal(utcInstantText(text, pgParse), viaDate(text), text)
        checked++
      }
    // random instants over the whole range of 4-digit years, with 0 to 6 fraction digits
    let seed = 42
    const random = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32)
    for (let i = 0; i < 20_000; i++) {
      const iso = new Date(FIRST + Math.floor(random() * (LAST - FIRST))).toISOString()
      const digits = Math.floor(random() * 7)
      const fraction = digits === 0 ? '' : `.${String(Math.floor(random() * 10 ** digits)).padStart(digits, '0')}`
      const text = `${iso.slice(0, 10)} ${iso.slice(11, 19)}${fraction}+00`
      assert.equal(utcInstantText(text, pgParse), viaDate(text), text)
      checked++
    }
    assert.ok(checked > 40_000)
  })

  it('leaves every other spelling to pg’s parser', () => {
    for (const text of ['2024-06-01 12:00:00+02', '2024-06-01 12:00:00-05:30', '2024-06-01 12:00:00.5+00:00:00', '0001-01-01 00:00:00+00 BC', '12024-06-01 12:00:00+00', 'infinity', '-infinity', '2024-06-01 12:00:00.1234567+00', '2024-06-01T12:00:00+00', 'Sat Jun 01 12:00:00 2024 UTC', '2024-06-01 12:00:00Z']) {
      let seen: string | null = null
      const result = utcInstantText(text, (value) => ((seen = value), 'parsed'))
      assert.equal(result, 'parsed', text)
      assert.equal(seen, text)
    }
  })
})

describe('utcWallClock', () => {
  it('reads a timestamp or date without a zone as UTC in any process time zone, BC and five-digit years included', () => {
    const zone = process.env.TZ
    process.env.TZ = 'Pacific/Chatham'
    try {
      const parse = pg.types.getTypeParser(TIMESTAMP, 'text') as (value: string) => unknown
      const iso = (text: string) => {
        const value = utcWallClock(text, parse)
        return value instanceof Date ? value.toISOString() : value
      }
      assert.equal(iso('2024-06-01 12:00:00.25'), '2024-06-01T12:00:00.250Z')
      assert.equal(iso('2024-06-01'), '2024-06-01T00:00:00.000Z')
      assert.equal(iso('0044-03-15 12:00:00 BC'), '-000043-03-15T12:00:00.000Z')
      assert.equal(iso('0044-03-15 BC'), '-000043-03-15T00:00:00.000Z')
      assert.equal(iso('12345-01-01 00:00:00'), '+012345-01-01T00:00:00.000Z')
      assert.equal(iso('infinity'), Infinity)
    } finally {
      if (zone === undefined) delete process.env.TZ
      else process.env.TZ = zone
    }
  })
})

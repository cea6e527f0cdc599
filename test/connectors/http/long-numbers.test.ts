import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import fc from 'fast-check'
import { createHttpConnector } from '../../../src/connectors/http/index.js'
import { roundedNumbersOf } from '../../../src/contract/index.js'
import { oracleCompare } from '../../support/decimal-oracle.js'
import { httpResource, idsOf, rawItemsConnector, startRawItemsUpstream, walk } from './fixtures.js'
import type { TestUpstream } from './upstream-server.js'

/**
 * Amounts as an upstream writes them: JSON.parse reads 12345678901234567.89 as 12345678901234568 and
 * 1234567890123456.7 as 1234567890123456.8, values the upstream never sent. A record whose declared number came
 * out rounded cannot be judged (counted, named, the walk not complete); trailing zeros and long strings are not
 * numbers rounded.
 */
const ITEMS = [
  '{"id":"a","amount":0.1,"version":1,"note":"12345678901234567890"}',
  '{"id":"b","amount":12345678901234567.89,"version":1,"note":"x"}',
  '{"id":"c","amount":100.50000000000000000,"version":1,"note":"x"}',
  '{"id":"d","amount":1234567890123456.7,"version":1,"note":"x"}',
  '{"id":"e","amount":-9007199254740991,"version":1,"note":"x"}',
]

/**
 * Short literals a double cannot hold either: out of range (1e400 is read as Infinity, 1e-400 as 0, a nonzero
 * amount read as zero) or below a double's normal range, where it keeps fewer digits (1.23456789e-320 reads as
 * 1.2347e-320). No run of 16 digits gives them away: the scan must not skip them.
 */
const SHORT_ITEMS = [
  '{"id":"f","amount":1e-400,"version":1,"note":"x"}',
  '{"id":"g","amount":1.23456789e-320,"version":1,"note":"x"}',
  '{"id":"h","amount":1.5,"version":1,"note":"x","extra":1e400}',
  '{"id":"i","amount":2.5e-3,"version":1,"note":"x","extra":-1E+400}',
]

describe('http connector: numbers a double cannot hold', () => {
  let upstream: TestUpstream
  before(async () => {
    upstream = await startRawItemsUpstream([...ITEMS, ...SHORT_ITEMS])
  })
  after(() => upstream.close())

  const connector = () =>
    createHttpConnector({
      resource: httpResource(
        rawItemsConnector(upstream.origin),
        { fields: { id: 'string', amount: 'number', version: 'integer', note: 'string' } },
      ),
    })

  it('a walk leaves out, and counts, the records whose amount JSON rounded; the rest keep their values', async () => {
    const { records, results } = await walk(connector(), 'up', 2)
    assert.deepEqual(idsOf(records), ['a', 'c', 'e', 'h', 'i'])
    assert.deepEqual(records.map((r) => r.fields.amount), [0.1, 100.5, -9007199254740991, 1.5, 0.0025])
    const unjudged = results.flatMap((r) => (r.kind === 'page' && r.unjudged ? [r.unjudged] : []))
    assert.deepEqual(unjudged, [
      { count: 1, absent: [], mistyped: ['amount'] },
      { count: 1, absent: [], mistyped: ['amount'] },
      { count: 1, absent: [], mistyped: ['amount'] },
      { count: 1, absent: [], mistyped: ['amount'] },
    ])
  })

  it('a record holding, undeclared, a number out of range is marked: a replacing write would send it back as null', async () => {
    const read = await connector().readByIds(['h', 'i', 'c'])
    assert.deepEqual([...read.records.keys()], ['h', 'i', 'c'])
    assert.deepEqual(['h', 'i', 'c'].map((id) => read.records.get(id)!.representationRounded === true), [true, true, false])
  })

  it('a read by id of such a record fails, naming the field, rather than answering a value it never held', async () => {
    const read = await connector().readByIds(['b', 'c'])
    assert.deepEqual([...read.records.keys()], ['c'])
    assert.deepEqual(read.failed.map((f) => f.id), ['b'])
    assert.match(read.failed[0]!.message, /amount/)
  })

  it('a read by id of a nonzero amount JSON reads as zero fails, saying why', async () => {
    const read = await connector().readByIds(['f'])
    assert.deepEqual(read.failed.map((f) => f.id), ['f'])
    assert.match(read.failed[0]!.message, /"amount" as another type than number \(or as a literal a JSON number cannot carry exactly: .*1e-400/)
  })

  it('roundedNumbersOf finds exactly the literals a double does not hold (property, BigInt oracle)', () => {
    const literal = fc
      .tuple(fc.boolean(), fc.stringMatching(/^[1-9][0-9]{0,24}$/), fc.option(fc.stringMatching(/^[0-9]{1,20}$/), { nil: undefined }), fc.option(fc.oneof(fc.integer({ min: -30, max: 30 }), fc.integer({ min: -420, max: 420 })), { nil: undefined }))
      .map(([negative, whole, fraction, exponent]) => `${negative ? '-' : ''}${whole}${fraction === undefined ? '' : `.${fraction}`}${exponent === undefined ? '' : `e${exponent}`}`)
    const entry = fc.oneof(literal.map((l) => ({ text: l, literal: l })), fc.stringMatching(/^[0-9a-z.]{0,30}$/).map((s) => ({ text: JSON.stringify(s), literal: null })))
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 8 }), (entries) => {
        const text = `{"items":[${entries.map((e, i) => `{"k${i}":${e.text}}`).join(',')}]}`
        JSON.parse(text)
        const expected = new Set(entries.flatMap((e) => (e.literal !== null && (!Number.isFinite(Number(e.literal)) || oracleCompare(e.literal, String(Number(e.literal))) !== 0) ? [Number(e.literal)] : [])))
        assert.deepEqual([...roundedNumbersOf(text)].sort(), [...expected].sort(), text)
      }),
      { numRuns: 2000 },
    )
  })
})

import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import {
  CONTINUATION_KINDS,
  REASON_CODES,
  TRUNCATING_REASONS,
  USES,
  WARNING_CODES,
  decide,
  envelopeSchema,
  type Continuation,
  type Envelope,
  type ReasonCode,
  type Warning,
} from '../../src/contract/index.js'

const RECORD = { id: 'svc-184', version: '7', fields: { owner: null } }
const CURSOR = 'c2Vl.aXQ'

function envelope(items: 'full' | 'empty', codes: readonly ReasonCode[], continuation: Continuation | null = null, warnings: Warning[] = []): Envelope {
  const complete = codes.length === 0
  const result: Envelope = {
    status: complete ? 'complete' : 'partial',
    items: items === 'full' ? [RECORD] : [],
    complete,
    truncated: codes.some((c) => TRUNCATING_REASONS.has(c)),
    incomplete_reasons: codes.map((code) => ({ code, message: `${code} happened` })),
    continuation,
    // no snapshot, but a walk that proved the data held still: the cases below are about the reasons
    scope: { resource: 'service_accounts', environment: 'prod', visibility: 'readable by iam-ro', snapshot: null, consistent_snapshot: false, stability: 'proven' },
    page: { returned: items === 'full' ? 1 : 0, requested_size: 100, ordering: 'id ascending' },
    warnings,
  }
  envelopeSchema.parse(result)
  return result
}

const next: Continuation = { kind: 'next_cursor', cursor: CURSOR }
const retryAfter: Continuation = { kind: 'retry_after', retry_after_seconds: 30, not_before: '2025-03-08T14:20:41Z', cursor: CURSOR }
const deadline: Continuation = { kind: 'retry_with_deadline', minimum_deadline_ms: 30_000, cursor: CURSOR }
const narrow: Continuation = { kind: 'narrow_query', message: 'split by region' }

/** How each reason code is normally produced: its continuation and what proving absence needs next. */
const PER_CODE: Record<ReasonCode, { continuation: Continuation | null; proveAbsence: 'continue_search' | 'retry_later' | 'refuse_or_request_review'; policy: string }> = {
  MORE_PAGES_AVAILABLE: { continuation: next, proveAbsence: 'continue_search', policy: 'follow the next cursor' },
  RESULT_LIMIT_REACHED: { continuation: narrow, proveAbsence: 'continue_search', policy: 'narrow the query under the upstream limit' },
  TIME_BUDGET_EXCEEDED: { continuation: deadline, proveAbsence: 'continue_search', policy: 'resume with a longer deadline' },
  SOURCE_UNAVAILABLE: { continuation: null, proveAbsence: 'refuse_or_request_review', policy: 'a source failed for good (no retry_after_seconds): no retry can fill the gap' },
  VISIBILITY_RESTRICTED: { continuation: null, proveAbsence: 'refuse_or_request_review', policy: 'this credential cannot see the whole scope: no retry can prove absence' },
  CLIENT_LIMIT_REACHED: { continuation: next, proveAbsence: 'continue_search', policy: "the wrapper's own budget stopped it: follow the cursor" },
  CURSOR_EXPIRED: { continuation: null, proveAbsence: 'retry_later', policy: 'start a new walk, never merged with this one' },
  RATE_LIMITED: { continuation: retryAfter, proveAbsence: 'retry_later', policy: 'wait, then resume with the cursor' },
  SNAPSHOT_INVALIDATED: { continuation: null, proveAbsence: 'retry_later', policy: 'the data moved: start a new walk' },
  SHAPE_MISMATCH: { continuation: null, proveAbsence: 'refuse_or_request_review', policy: 'records could not be judged against the declared fields: fix the config' },
}

describe('decide(): the four states of a result', () => {
  it('complete and empty proves absence → proceed', () => {
    assert.equal(decide(envelope('empty', []), 'prove_absence').decision, 'proceed')
    assert.equal(decide(envelope('empty', []), 'change_from_absence').decision, 'proceed')
  })
  it('complete with items → proceed for every use', () => {
    for (const use of USES) assert.equal(decide(envelope('full', []), use).decision, 'proceed', use)
  })
  it('empty first page with more pages → continue_search', () => {
    assert.equal(decide(envelope('empty', ['MORE_PAGES_AVAILABLE'], next), 'prove_absence').decision, 'continue_search')
  })
  it('a change based on absence after an empty partial page → refuse_or_request_review, never proceed', () => {
    const verdict = decide(envelope('empty', ['MORE_PAGES_AVAILABLE'], next), 'change_from_absence')
    assert.equal(verdict.decision, 'refuse_or_request_review')
    assert.deepEqual(verdict.codes, ['MORE_PAGES_AVAILABLE'])
  })
})

for (const code of REASON_CODES) {
  const { continuation, proveAbsence, policy } = PER_CODE[code]
  describe(`decide(): ${code}`, () => {
    for (const items of ['full', 'empty'] as const) {
      const result = envelope(items, [code], continuation)
      it(`${items} list with ${code}: proving absence → ${proveAbsence} (${policy})`, () => {
        assert.equal(decide(result, 'prove_absence').decision, proveAbsence)
      })
      it(`${items} list with ${code}: a change based on absence → refuse_or_request_review, never proceed`, () => {
        assert.equal(decide(result, 'change_from_absence').decision, 'refuse_or_request_review')
      })
      it(`${items} list with ${code}: a change to the returned records needs a reviewer to see ${code} → refuse_or_request_review`, () => {
        const verdict = decide(result, 'change_from_presence')
        assert.equal(verdict.decision, 'refuse_or_request_review')
        assert.match(verdict.reason, new RegExp(code))
      })
      it(`${items} list with ${code}: a report or a read-only investigation that shows the reason → proceed`, () => {
        assert.equal(decide(result, 'report').decision, 'proceed')
        assert.equal(decide(result, 'investigate').decision, 'proceed')
        assert.match(decide(result, 'report').reason, new RegExp(code))
      })
    }
  })
}

describe('decide(): warnings never decide completeness', () => {
  for (const code of WARNING_CODES) {
    it(`complete empty result with ${code} still proves absence → proceed`, () => {
      const result = envelope('empty', [], null, [{ code, message: `${code} noted` }])
      assert.equal(decide(result, 'prove_absence').decision, 'proceed')
    })
    it(`partial empty result with ${code} → never proceed on absence`, () => {
      const result = envelope('empty', ['MORE_PAGES_AVAILABLE'], next, [{ code, message: `${code} noted` }])
      assert.notEqual(decide(result, 'prove_absence').decision, 'proceed')
      assert.equal(decide(result, 'change_from_absence').decision, 'refuse_or_request_review')
    })
  }
  it('complete result with STALE_INDEX: a change needs live state → refuse_or_request_review', () => {
    const stale: Warning = { code: 'STALE_INDEX', message: 'index lags 15 min', source: 'eu' }
    assert.equal(decide(envelope('empty', [], null, [stale]), 'change_from_absence').decision, 'refuse_or_request_review')
    assert.equal(decide(envelope('full', [], null, [stale]), 'change_from_presence').decision, 'refuse_or_request_review')
  })
  it('restricted visibility wins over a cursor: following it can never prove absence → refuse_or_request_review', () => {
    assert.equal(decide(envelope('empty', ['MORE_PAGES_AVAILABLE', 'VISIBILITY_RESTRICTED'], next), 'prove_absence').decision, 'refuse_or_request_review')
  })
  it('a shape mismatch wins over a cursor: reading on cannot judge records the config cannot read → refuse_or_request_review', () => {
    const verdict = decide(envelope('empty', ['MORE_PAGES_AVAILABLE', 'SHAPE_MISMATCH'], next), 'prove_absence')
    assert.equal(verdict.decision, 'refuse_or_request_review')
    assert.match(verdict.reason, /fix the config/)
  })
  it('a reason with no way to continue: absence cannot be proven → refuse_or_request_review', () => {
    assert.equal(decide(envelope('empty', ['RESULT_LIMIT_REACHED'], null), 'prove_absence').decision, 'refuse_or_request_review')
  })
})

describe('decide(): a malformed response never authorises a change', () => {
  it('complete: true with reasons (contradictory) is judged by its reasons → never proceed on absence', () => {
    const contradictory = { ...envelope('empty', ['MORE_PAGES_AVAILABLE'], next), complete: true }
    assert.equal(envelopeSchema.safeParse(contradictory).success, false)
    assert.equal(decide(contradictory, 'change_from_absence').decision, 'refuse_or_request_review')
    assert.equal(decide(contradictory, 'prove_absence').decision, 'continue_search')
  })
  it('complete: false without reasons and no continuation → refuse_or_request_review', () => {
    const bare = { ...envelope('empty', []), complete: false }
    assert.equal(decide(bare, 'prove_absence').decision, 'refuse_or_request_review')
    assert.equal(decide(bare, 'change_from_absence').decision, 'refuse_or_request_review')
  })
})

const reasonsArb = fc.uniqueArray(fc.constantFrom(...REASON_CODES), { minLength: 1, maxLength: 4 })
const continuationArb: fc.Arbitrary<Continuation | null> = fc.oneof(
  fc.constant(null),
  fc.constantFrom(...CONTINUATION_KINDS).map((kind): Continuation => (kind === 'next_cursor' ? next : kind === 'retry_after' ? retryAfter : kind === 'retry_with_deadline' ? deadline : narrow)),
)
const warningsArb = fc.uniqueArray(fc.constantFrom(...WARNING_CODES), { maxLength: 4 }).map((codes) => codes.map((code): Warning => ({ code, message: code })))

describe('decide(): properties', () => {
  it('any partial result, full or empty, whatever its continuation and warnings: never proceed on absence', () => {
    fc.assert(
      fc.property(fc.constantFrom('full' as const, 'empty' as const), reasonsArb, continuationArb, warningsArb, fc.boolean(), (items, codes, continuation, warnings, lie) => {
        const result = { ...envelope(items, codes, continuation, warnings), ...(lie ? { complete: true } : {}) }
        assert.equal(decide(result, 'change_from_absence').decision, 'refuse_or_request_review')
        assert.equal(decide(result, 'change_from_presence').decision, 'refuse_or_request_review')
        assert.notEqual(decide(result, 'prove_absence').decision, 'proceed')
        assert.deepEqual(decide(result, 'report').codes, codes)
      }),
      { numRuns: 300 },
    )
  })
})

describe('decide(): continuations never loop, and an attempt that cannot finish is never continued (issue 13)', () => {
  const withReasons = (base: Envelope, reasons: Envelope['incomplete_reasons']): Envelope => ({ ...base, incomplete_reasons: reasons })
  it('a transient source failure (retry_after_seconds) with a retry_after continuation → retry_later', () => {
    const result = withReasons(envelope('empty', ['SOURCE_UNAVAILABLE'], retryAfter), [
      { code: 'SOURCE_UNAVAILABLE', message: 'source "us" answered 503', source: 'us', retry_after_seconds: 30, upstream_status: 503 },
    ])
    assert.equal(decide(result, 'prove_absence').decision, 'retry_later')
  })
  it('a permanent source failure beside a next cursor for the other sources → refuse_or_request_review, not continue_search', () => {
    const result = withReasons(envelope('full', ['SOURCE_UNAVAILABLE', 'CLIENT_LIMIT_REACHED'], next), [
      { code: 'SOURCE_UNAVAILABLE', message: 'source "us" answered 404', source: 'us', upstream_status: 404 },
      { code: 'CLIENT_LIMIT_REACHED', message: 'max_pages', limit: { name: 'max_pages', value: 1 } },
    ])
    const verdict = decide(result, 'prove_absence')
    assert.equal(verdict.decision, 'refuse_or_request_review')
    assert.match(verdict.reason, /SOURCE_UNAVAILABLE: us/)
  })
  for (const code of ['CURSOR_EXPIRED', 'SNAPSHOT_INVALIDATED'] as const)
    for (const continuation of [next, deadline, narrow, retryAfter])
      it(`${code} beside a ${continuation.kind} continuation → retry_later for the whole attempt`, () => {
        const verdict = decide(envelope('full', [code, 'CLIENT_LIMIT_REACHED'], continuation), 'prove_absence')
        assert.equal(verdict.decision, 'retry_later')
        assert.match(verdict.reason, new RegExp(code))
      })
})

describe('decide(): a complete result proves absence only when the data held still', () => {
  const base = envelope('empty', [])
  for (const stability of [undefined, 'unproven'] as const) {
    const result: Envelope = { ...base, scope: { ...base.scope, consistent_snapshot: false, ...(stability ? { stability } : { stability: undefined }) } }
    it(`complete, no snapshot, stability ${stability ?? 'absent'} → refuse_or_request_review for absence, proceed for a report`, () => {
      for (const use of ['prove_absence', 'change_from_absence'] as const) {
        const verdict = decide(result, use)
        assert.equal(verdict.decision, 'refuse_or_request_review', use)
        assert.match(verdict.reason, /stability/)
      }
      assert.equal(decide(result, 'report').decision, 'proceed')
      assert.equal(decide(result, 'change_from_presence').decision, 'proceed')
    })
  }
  it('complete with a consistent snapshot, or with stability proven by the walk → proceed', () => {
    assert.equal(decide({ ...base, scope: { ...base.scope, consistent_snapshot: true, stability: 'snapshot' } }, 'prove_absence').decision, 'proceed')
    assert.equal(decide({ ...base, scope: { ...base.scope, consistent_snapshot: false, stability: 'proven' } }, 'prove_absence').decision, 'proceed')
  })
})

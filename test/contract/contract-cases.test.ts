import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { DECISIONS, REASON_CODES, USES, WARNING_CODES, decide, envelopeSchema, type Decision, type Envelope, type Use } from '../../src/contract/index.js'

/**
 * The contract fixtures other teams run against their own tool wrappers: each response must validate, and the
 * shared decision rule must give the expected decision. If a wrapper flattens the metadata (drops `complete`,
 * the reasons or the continuation), these cases are the ones that catch it.
 */

interface ContractCase {
  readonly case: string
  readonly use: Use
  readonly response: Envelope
  readonly expected_agent_decision: Decision
}

const cases = JSON.parse(readFileSync(new URL('../../fixtures/contract-cases.json', import.meta.url), 'utf8')) as ContractCase[]

describe('contract fixtures (fixtures/contract-cases.json)', () => {
  for (const c of cases) {
    it(`${c.case} [${c.use}]`, () => {
      assert.ok(USES.includes(c.use), `unknown use ${c.use}`)
      assert.ok(DECISIONS.includes(c.expected_agent_decision))
      const parsed = envelopeSchema.safeParse(c.response)
      assert.ok(parsed.success, parsed.success ? '' : JSON.stringify(parsed.error.issues))
      assert.equal(decide(c.response, c.use).decision, c.expected_agent_decision)
    })
  }

  it('has unique case names, each naming the decision it expects', () => {
    assert.equal(new Set(cases.map((c) => c.case)).size, cases.length)
    for (const c of cases) assert.ok(c.case.includes(`→ ${c.expected_agent_decision}`), c.case)
  })

  it("holds the article's case and the mutation after it", () => {
    const first = cases.find((c) => c.case === 'empty first page with more pages → continue_search')
    assert.ok(first)
    assert.equal(first.use, 'prove_absence')
    const change = cases.find((c) => c.use === 'change_from_absence' && JSON.stringify(c.response) === JSON.stringify(first.response))
    assert.ok(change, 'the same response, used for a change based on absence')
    assert.equal(change.expected_agent_decision, 'refuse_or_request_review')
  })

  it('covers every reason code on a full and on an empty item list', () => {
    for (const code of REASON_CODES) {
      const withCode = cases.filter((c) => c.response.incomplete_reasons.some((r) => r.code === code))
      assert.ok(withCode.some((c) => c.response.items.length > 0), `${code} on a full list`)
      assert.ok(withCode.some((c) => c.response.items.length === 0), `${code} on an empty list`)
      assert.ok(withCode.some((c) => c.use === 'change_from_absence' || c.use === 'change_from_presence'), `${code} before a change`)
    }
  })

  it('covers every warning code, and a complete empty result that proves absence', () => {
    for (const code of WARNING_CODES) assert.ok(cases.some((c) => c.response.warnings.some((w) => w.code === code)), code)
    assert.ok(cases.some((c) => c.response.complete && c.response.items.length === 0 && c.use === 'prove_absence' && c.expected_agent_decision === 'proceed'))
  })

  it('no partial response ever authorises a change based on absence', () => {
    for (const c of cases) if (!c.response.complete) assert.notEqual(decide(c.response, 'change_from_absence').decision, 'proceed', c.case)
  })
})

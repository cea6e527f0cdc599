import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { z } from 'zod'
import {
  CONTINUATION_KINDS,
  REASON_CODES,
  WARNING_CODES,
  envelopeJsonSchema,
  envelopeOf,
  envelopeSchema,
  type Envelope,
} from '../../src/contract/index.js'

const complete: Envelope = {
  status: 'complete',
  items: [],
  complete: true,
  truncated: false,
  incomplete_reasons: [],
  continuation: null,
  scope: { resource: 'subscriptions', environment: 'billing-prod', visibility: 'readable by billing-ro', snapshot: 'tx:9', consistent_snapshot: true },
  page: { returned: 0, requested_size: 100, ordering: 'id ascending' },
  warnings: [],
}
const partial: Envelope = {
  ...complete,
  status: 'partial',
  complete: false,
  incomplete_reasons: [{ code: 'MORE_PAGES_AVAILABLE', message: 'more pages' }],
  continuation: { kind: 'next_cursor', cursor: 'c' },
}

function issues(value: unknown): string[] {
  const r = envelopeSchema.safeParse(value)
  return r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`)
}

describe('envelope invariants', () => {
  it('accepts a complete and a partial envelope', () => {
    assert.deepEqual(issues(complete), [])
    assert.deepEqual(issues(partial), [])
  })
  it('rejects status "complete" with complete: false', () => {
    assert.notDeepEqual(issues({ ...partial, status: 'complete' }), [])
  })
  it('rejects status "partial" with complete: true', () => {
    assert.notDeepEqual(issues({ ...complete, status: 'partial' }), [])
  })
  it('rejects a partial result without reasons', () => {
    assert.ok(issues({ ...partial, incomplete_reasons: [] }).some((i) => i.startsWith('incomplete_reasons')))
  })
  it('rejects a complete result that lists reasons', () => {
    assert.ok(issues({ ...complete, incomplete_reasons: partial.incomplete_reasons }).some((i) => i.startsWith('incomplete_reasons')))
  })
  it('rejects status "success" (never for partial data) and unknown codes', () => {
    assert.notDeepEqual(issues({ ...complete, status: 'success' }), [])
    assert.notDeepEqual(issues({ ...partial, incomplete_reasons: [{ code: 'SOME_RESULTS_MAY_BE_MISSING', message: 'x' }] }), [])
    assert.notDeepEqual(issues({ ...complete, warnings: [{ code: 'BE_CAREFUL', message: 'x' }] }), [])
    assert.notDeepEqual(issues({ ...partial, continuation: { kind: 'repeat_same_query' } }), [])
  })
  it('rejects a response without the decision field', () => {
    const { complete: _dropped, ...flattened } = complete
    assert.notDeepEqual(issues(flattened), [])
  })
  it('envelopeOf() keeps the invariants for a typed item', () => {
    const typed = envelopeOf(z.object({ id: z.string() }))
    assert.equal(typed.safeParse({ ...partial, items: [{ id: 'a' }] }).success, true)
    assert.equal(typed.safeParse({ ...partial, items: [{ id: 1 }] }).success, false)
    assert.equal(typed.safeParse({ ...partial, incomplete_reasons: [] }).success, false)
  })
})

describe('envelope JSON Schema export', () => {
  const text = JSON.stringify(envelopeJsonSchema())
  it('contains the reason code enum', () => {
    const schema = envelopeJsonSchema()
    const found: unknown[][] = []
    const visit = (node: unknown): void => {
      if (Array.isArray(node)) node.forEach(visit)
      else if (node && typeof node === 'object') {
        const enumValue = (node as { enum?: unknown[] }).enum
        if (enumValue) found.push(enumValue)
        Object.values(node).forEach(visit)
      }
    }
    visit(schema)
    assert.ok(found.some((e) => JSON.stringify([...e].sort()) === JSON.stringify([...REASON_CODES].sort())), 'reason code enum')
    assert.ok(found.some((e) => JSON.stringify([...e].sort()) === JSON.stringify([...WARNING_CODES].sort())), 'warning code enum')
  })
  it('names every continuation kind and the decision fields', () => {
    for (const kind of CONTINUATION_KINDS) assert.ok(text.includes(`"${kind}"`), kind)
    for (const field of ['complete', 'truncated', 'incomplete_reasons', 'continuation', 'scope', 'page', 'warnings']) assert.ok(text.includes(`"${field}"`), field)
  })
  it('is draft 2020-12', () => {
    assert.equal(envelopeJsonSchema().$schema, 'https://json-schema.org/draft/2020-12/schema')
  })
})

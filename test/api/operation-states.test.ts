import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createApp } from '../../src/api/index.js'
import { finalState } from '../../src/operations/ledger.js'
import { OPERATION_STATES } from '../../src/operations/index.js'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'

const counts = (c: Partial<Record<'succeeded' | 'failed' | 'skipped' | 'unknown', number>>) => ({ pending: 0, in_flight: 0, succeeded: 0, failed: 0, skipped: 0, unknown: 0, ...c })

describe('operation states are named for what happened', () => {
  let fx: GatewayFixture
  before(async () => {
    fx = await startDemoGateway({ store: 'sqlite', count: 20, serve: false })
  })
  after(async () => {
    await fx?.close()
  })

  test('no failure and some skips is completed_with_skips, never partially_failed; unknowns and failures are named apart', () => {
    assert.equal(finalState(counts({ succeeded: 7, skipped: 3 }), false), 'completed_with_skips')
    assert.equal(finalState(counts({ skipped: 3 }), false), 'completed_with_skips')
    assert.equal(finalState(counts({ succeeded: 7, unknown: 1, skipped: 2 }), false), 'completed_with_unknown')
    assert.equal(finalState(counts({ succeeded: 7, failed: 1, skipped: 2 }), false), 'partially_failed')
    assert.equal(finalState(counts({ failed: 1, skipped: 2 }), false), 'failed')
    assert.equal(finalState(counts({ succeeded: 7 }), false), 'succeeded')
    assert.equal(finalState(counts({ succeeded: 7 }), true), 'halted')
  })

  test('the OpenAPI document lists every state, with what each means', async () => {
    const doc = (await (await createApp({ gateway: fx.gateway }).request('/openapi.json')).json()) as any
    const text = JSON.stringify(doc.components.schemas.Operation ?? doc.components.schemas)
    const found = new Set<string>()
    JSON.stringify(doc, (_key, value) => {
      if (value && Array.isArray(value.enum) && value.enum.includes('completed_with_skips')) {
        assert.deepEqual(value.enum, [...OPERATION_STATES])
        assert.match(value.description, /completed_with_skips: nothing failed, some skipped/)
        found.add('enum')
      }
      return value
    })
    assert.ok(found.has('enum'), text.slice(0, 500))
  })
})

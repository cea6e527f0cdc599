import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { checkRecordFields, checkStatus, checkUntouched } from '../../src/operations/index.js'

const expect = { status: [200, 204], fields: { role: 'viewer', limits: { a: 1, b: [2] } } }
const TYPES = { role: 'string' }

describe('checking a write against the approved effect', () => {
  test('the approved values, whatever their key order, hold', () => {
    assert.equal(checkRecordFields({ id: 'u1', role: 'viewer', limits: { b: [2], a: 1 } }, expect.fields, TYPES).kind, 'holds')
  })
  test('another value contradicts it, naming the field and both values', () => {
    const check = checkRecordFields({ role: 'admin', limits: { a: 1, b: [2] } }, expect.fields, TYPES)
    assert.deepEqual(check, { kind: 'contradicted', message: 'field "role" is "admin" where "viewer" was approved' })
  })
  test('a timestamp read back in another spelling is the same instant, a number read back as its exact digits the same value; a string is compared as written', () => {
    const types = { at: 'timestamp', amount: 'number', note: 'string' }
    assert.equal(checkRecordFields({ at: '2024-06-01T12:00:00.000Z' }, { at: '2024-06-01T14:00:00+02:00' }, types).kind, 'holds')
    assert.equal(checkRecordFields({ at: '2024-06-01T12:00:00.001Z' }, { at: '2024-06-01T12:00:00Z' }, types).kind, 'contradicted')
    assert.equal(checkRecordFields({ amount: '12345678901234567.890' }, { amount: 1e16 }, types).kind, 'contradicted')
    assert.equal(checkRecordFields({ amount: '100.00' }, { amount: 100 }, types).kind, 'holds')
    assert.equal(checkRecordFields({ note: '2024-06-01T12:00:00.000Z' }, { note: '2024-06-01T12:00:00Z' }, types).kind, 'contradicted')
  })
  test('a status the action does not expect contradicts it; an expected one proves nothing by itself', () => {
    assert.match(checkStatus(202, expect)!.message, /answered 202; the approved action expects 200 or 204/)
    assert.equal(checkStatus(204, expect), null)
  })
})

describe('the whole record outside the set', () => {
  const before = { id: 'a', status: 'active', version: 3, plan: { tier: 'gold', seats: [1, 2] }, secret: 'x', extra: null }
  const exempt = ['status', 'version']

  test('only set fields, the version and fields that appear changed: it holds', () => {
    assert.deepEqual(checkUntouched(before, { ...before, status: 'paused', version: 4, added: 1 }, exempt), { kind: 'holds' })
  })
  test('a field outside the set that changed or vanished contradicts it, naming paths but never values', () => {
    const { secret: _s, ...withoutSecret } = before
    const check = checkUntouched(before, { ...withoutSecret, status: 'paused', plan: { tier: 'silver', seats: [1, 2] } }, exempt)
    assert.equal(check.kind, 'contradicted')
    assert.match((check as any).message, /"plan" changed, "secret" vanished/)
    assert.doesNotMatch((check as any).message, /silver|gold|"x"/)
    assert.equal((check as any).vanishedOnly, false)
  })
  test('only vanished fields are marked so (a partial answer body cannot tell them from erased ones)', () => {
    const check = checkUntouched(before, { id: 'a', status: 'paused', version: 4 }, exempt)
    assert.equal(check.kind, 'contradicted')
    assert.equal((check as any).vanishedOnly, true)
  })
  test('a nested set path exempts that path only: its siblings are compared', () => {
    assert.equal(checkUntouched(before, { ...before, plan: { tier: 'silver', seats: [1, 2] } }, ['plan.tier']).kind, 'holds')
    assert.match((checkUntouched(before, { ...before, plan: { tier: 'silver', seats: [] } }, ['plan.tier']) as any).message, /"plan.seats" changed/)
    assert.match((checkUntouched(before, { ...before, plan: 'flat' }, ['plan.tier']) as any).message, /"plan" changed/)
  })
  test('an after that is not an object contradicts it', () => {
    assert.equal(checkUntouched(before, [before], exempt).kind, 'contradicted')
  })
})

describe('the whole record outside the set: paths', () => {
  test('a key that contains a dot is its own field, never a nested path', () => {
    const before = { 'plan.tier': 'gold', plan: { tier: 'gold' } }
    const check = checkUntouched(before, { 'plan.tier': 'lost', plan: { tier: 'silver' } }, ['plan.tier'])
    assert.match((check as any).message, /^the write touched what the action does not set: "plan.tier" changed/)
    assert.equal(checkUntouched(before, { 'plan.tier': 'gold', plan: { tier: 'silver' } }, ['plan.tier']).kind, 'holds')
  })
})

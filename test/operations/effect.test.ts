import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { checkWriteAnswer } from '../../src/operations/index.js'

const expect = { status: [200, 204], fields: { role: 'viewer', limits: { a: 1, b: [2] } } }
const answer = (status: number, fields: unknown, hasBody = fields !== undefined) => checkWriteAnswer({ status, fields, hasBody }, expect)

describe('checking a write answer against the approved effect', () => {
  test('the approved values, whatever their key order, hold', () => {
    assert.equal(answer(200, { id: 'u1', role: 'viewer', limits: { b: [2], a: 1 } }).kind, 'holds')
  })
  test('another value contradicts it, naming the field and both values', () => {
    const check = answer(200, { role: 'admin', limits: { a: 1, b: [2] } })
    assert.deepEqual(check, { kind: 'contradicted', message: 'field "role" is "admin" where "viewer" was approved' })
  })
  test('an unexpected shape contradicts it: a missing field, a wrapped record, an array, text', () => {
    assert.match((answer(200, { role: 'viewer' }) as any).message, /no field "limits" \(unexpected shape\)/)
    assert.match((answer(200, { data: { role: 'viewer' } }) as any).message, /no field "role"/)
    assert.equal(answer(200, [{ role: 'viewer' }]).kind, 'contradicted')
    assert.equal(answer(200, 'ok').kind, 'contradicted')
  })
  test('a status the action does not expect contradicts it', () => {
    assert.match((answer(202, { role: 'viewer', limits: { a: 1, b: [2] } }) as any).message, /answered 202; the approved action expects 200 or 204/)
  })
  test('an empty answer cannot be checked here: the record is re-read; with nothing to check, it holds', () => {
    assert.equal(answer(204, undefined, false).kind, 'unverifiable')
    assert.equal(checkWriteAnswer({ status: 204, fields: undefined, hasBody: false }, { status: [204], fields: {} }).kind, 'holds')
  })
})

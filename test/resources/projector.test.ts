import { test } from 'node:test'
import assert from 'node:assert/strict'
import type { ResourceConfig } from '../../src/config/index.js'
import { createFieldPolicy } from '../../src/resources/field-policy.js'
import { projector } from '../../src/resources/projector.js'

test('a projection keeps the listed fields in the listed order, a missing one as null, nothing else', () => {
  const project = projector(['id', 'status', 'absent', 'amount'])
  const out = project({ amount: 0, secret: 'x', status: 'open', id: 'a', note: undefined })
  assert.deepEqual(Object.keys(out), ['id', 'status', 'absent', 'amount'])
  assert.deepEqual(out, { id: 'a', status: 'open', absent: null, amount: 0 })
  assert.equal(JSON.stringify(out), '{"id":"a","status":"open","absent":null,"amount":0}')
})

test('a record field named __proto__ is answered as its own key, never set as the projection\'s prototype', () => {
  const policy = createFieldPolicy({ review_fields: ['id', '__proto__'], denied_fields: [], fields: {}, id_field: 'id' } as unknown as ResourceConfig)
  const out = policy.project(JSON.parse('{"id": "a", "__proto__": {"polluted": true}}') as Record<string, unknown>, ['id', '__proto__'])
  assert.equal(Object.getPrototypeOf(out), Object.prototype)
  assert.equal(JSON.stringify(out), '{"id":"a","__proto__":{"polluted":true}}')
})

test('field names that are not identifiers, or __proto__, are own keys like any other', () => {
  const names = ['__proto__', 'a"b', 'line\u2028sep', 'x\\y', 'constructor']
  const fields = JSON.parse('{"__proto__": {"polluted": true}, "a\\"b": 1, "line\\u2028sep": 2, "x\\\\y": 3, "constructor": 4}') as Record<string, unknown>
  const out = projector(names)(fields)
  assert.equal(Object.getPrototypeOf(out), Object.prototype)
  assert.deepEqual(Object.keys(out), names)
  assert.deepEqual(out.__proto__, { polluted: true })
  assert.equal(out['a"b'], 1)
  assert.equal(out['line\u2028sep'], 2)
  assert.equal(out['x\\y'], 3)
  assert.equal(out.constructor, 4)
  assert.equal(({} as { polluted?: boolean }).polluted, undefined)
})

import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { protoKeyPaths } from '../../src/contract/index.js'

describe('protoKeyPaths: own "__proto__" keys a schema would drop without a word', () => {
  it('names each one, nested in objects and arrays, and nothing else', () => {
    const value = JSON.parse('{"filter": {"__proto__": {"eq": 1}, "status": "x"}, "exclude": [{"rule": "r", "filter": {"__proto__": 2}}], "proto": {"__proto": 3}}')
    assert.deepEqual(protoKeyPaths(value, ['request']), ['request.filter.__proto__', 'request.exclude.0.filter.__proto__'])
    assert.deepEqual(protoKeyPaths({ filter: { status: 'x' } }), [])
    // an object literal's __proto__ sets the prototype: not an own key, nothing dropped
    assert.deepEqual(protoKeyPaths({ __proto__: { eq: 1 } }), [])
    for (const scalar of [null, undefined, 1, 'a', true]) assert.deepEqual(protoKeyPaths(scalar), [])
  })

  it('looks into an object reached twice (a YAML alias, a cycle) once', () => {
    const shared = JSON.parse('{"__proto__": 1}')
    const cyclic: Record<string, unknown> = { a: shared, b: shared }
    cyclic.self = cyclic
    assert.deepEqual(protoKeyPaths(cyclic), ['a.__proto__'])
  })
})

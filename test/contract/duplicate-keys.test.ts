import assert from 'node:assert/strict'
import { test } from 'node:test'
import { duplicateKeysOf } from '../../src/contract/index.js'

const of = (text: string) => duplicateKeysOf(text, JSON.parse(text))

test('duplicateKeysOf names every key named twice, with its object path; the quick count clears clean bodies, colons in strings and keys included', () => {
  assert.deepEqual(of('{"items":[{"id":"a:b","id":"c"},{"x":{"y":1,"y":2}}],"n":1,"n":2}'), [
    { path: 'items.0', key: 'id' },
    { path: 'items.1.x', key: 'y' },
    { path: '', key: 'n' },
  ])
  assert.deepEqual(of('{"a:b":"c:d","e":["f:g",{"h":"::"}],"i":null}'), [])
  // a colon written \u003a is not a colon of the text: it must not hide a repeated key from the count
  assert.deepEqual(of('{"a":1,"a":2,"s":"\\u003a"}'), [{ path: '', key: 'a' }])
  assert.deepEqual(of('{"a":1,"a":2,"s":"\\u003A"}'), [{ path: '', key: 'a' }])
})

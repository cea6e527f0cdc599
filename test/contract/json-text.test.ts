import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { duplicateKeyOf, roundedLiteralOf } from '../../src/contract/index.js'
import { unfaithfulJsonIn } from '../../src/api/unique-keys.js'

/** `depth` arrays, one inside the other, around `inner`: text JSON.parse reads, nested past any call stack. */
const nested = (depth: number, inner: string) => `${'['.repeat(depth)}${inner}${']'.repeat(depth)}`

/**
 * The walk over a JSON text as written runs before any depth check (a `warrant mcp` stdin line, an /mcp body of
 * any content type). Before: it recursed once a level, threw RangeError at some 8,000 levels, and the stdio server
 * died of it (an /mcp body sent as text/plain was a 500).
 */
describe('walking a JSON text: any nesting JSON.parse takes', () => {
  test('a text 200,000 levels deep is walked to its end: a key named twice or a rounded number inside is found, with its path', () => {
    const depth = 200_000
    assert.doesNotThrow(() => JSON.parse(nested(depth, '1')))
    assert.equal(duplicateKeyOf(nested(depth, '{"a":1,"b":2}')), null)
    assert.equal(roundedLiteralOf(nested(depth, '9007199254740992')), null)
    const deepPath = Array(depth).fill('0').join('.')
    assert.deepEqual(duplicateKeyOf(nested(depth, '{"a":1,"a":2}')), { path: deepPath, key: 'a' })
    assert.deepEqual(roundedLiteralOf(nested(depth, '9007199254740993')), { path: deepPath, literal: '9007199254740993', read_as: '9007199254740992' })
    assert.equal(unfaithfulJsonIn(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"x":${nested(depth, '"y"')}}}}`), null)
  })

  test('members after a deep one still count: siblings, keys after a closed container, empty containers', () => {
    assert.deepEqual(duplicateKeyOf(`{"a":${nested(50_000, '{}')},"b":[],"c":{},"b":1}`), { path: '', key: 'b' })
    assert.deepEqual(roundedLiteralOf(`[${nested(50_000, '[]')}, {"k": [ 1 , 2, 1e400 ]}]`), { path: '1.k.2', literal: '1e400', read_as: 'Infinity' })
    assert.deepEqual(duplicateKeyOf('{ "x" : [ { "p" : 1 } , { "p" : 2 , "q" : { } , "p" : 3 } ] }'), { path: 'x.1', key: 'p' })
  })
})

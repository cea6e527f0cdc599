import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { describe, test } from 'node:test'
import fc from 'fast-check'
import { WarrantError, digestOf } from '../../src/contract/index.js'
import { createCursorCodec } from '../../src/inventory/index.js'
import { createPageCursors } from '../../src/selections/page-cursor.js'

const codec = createCursorCodec({ key: randomBytes(32) })
const cursors = createPageCursors(codec)

/** The `invalid_cursor` reason a decode throws, or the ord it returned. */
function decodeOrReason(selectionId: string, list: string, cursor: string, maxOrd: number): number | string {
  try {
    return cursors.decode(selectionId, list, cursor, maxOrd)
  } catch (error) {
    assert.ok(error instanceof WarrantError, `not a WarrantError: ${String(error)}`)
    assert.equal(error.code, 'invalid_cursor')
    return (error.details as { reason: string }).reason
  }
}

describe('page cursors over a frozen list', () => {
  test('a cursor decodes to the ord it was issued for, only for its own selection and list, and only unaltered', () => {
    fc.assert(
      fc.property(fc.nat({ max: 2_000_000 }), fc.nat({ max: 1000 }), fc.string({ minLength: 1, maxLength: 30 }), fc.integer({ min: 0, max: 60 }), fc.nat(), (ord, headroom, selectionId, at, bit) => {
        const cursor = cursors.encode(selectionId, 'members', ord)
        assert.equal(cursors.decode(selectionId, 'members', cursor, ord + headroom), ord)
        // past the list's end (a list of fewer members than the cursor names): refused, never an empty page
        if (ord > 0) assert.equal(decodeOrReason(selectionId, 'members', cursor, ord - 1), 'malformed')
        // another selection, or another list of the same selection
        assert.equal(decodeOrReason(`${selectionId}x`, 'members', cursor, ord + headroom), 'forged_or_altered')
        assert.equal(decodeOrReason(selectionId, 'excluded:stale', cursor, ord + headroom), 'forged_or_altered')
        // any one character changed: refused, whatever it becomes
        const i = at % cursor.length
        const alphabet = '0123456789.ABCxyz_-=+/ '
        const replacement = alphabet[bit % alphabet.length]!
        if (replacement !== cursor[i]) {
          const altered = cursor.slice(0, i) + replacement + cursor.slice(i + 1)
          assert.equal(typeof decodeOrReason(selectionId, 'members', altered, ord + headroom), 'string', `altered at ${i}: ${altered}`)
        }
      }),
      { numRuns: 300 },
    )
  })

  test('another gateway key, garbage and truncation are invalid_cursor; no cursor is the start', () => {
    const cursor = cursors.encode('sel_1', 'members', 42)
    const other = createPageCursors(createCursorCodec({ key: randomBytes(32) }))
    assert.equal(decodeOrReason('sel_1', 'members', other.encode('sel_1', 'members', 42), 100), 'forged_or_altered')
    for (const bad of [cursor.slice(0, -1), `${cursor}A`, `-1${cursor.slice(2)}`, '42', '42.', `0${cursor}`, 'not a cursor', '1e3.xyz', '\u0000']) assert.equal(typeof decodeOrReason('sel_1', 'members', bad, 100), 'string', bad)
    for (const none of [undefined, null, '']) assert.equal(cursors.decode('sel_1', 'members', none, 100), 0)
  })

  test('a walk-format cursor issued before this format still names its position, and still only in its own list', () => {
    const fingerprint = digestOf({ v: 1, kind: 'selection_page', selection_id: 'sel_1', list: 'members' })
    const legacy = codec.encode({ fingerprint, snapshot: null, consistent: true, sources: [{ source: 'ord', position: '77', finished: false, gaps: [] }] })
    assert.equal(cursors.decode('sel_1', 'members', legacy, 100), 77)
    assert.equal(decodeOrReason('sel_1', 'members', legacy, 50), 'malformed')
    assert.equal(decodeOrReason('sel_2', 'members', legacy, 100), 'other_query')
  })
})

import assert from 'node:assert/strict'
import { test } from 'node:test'
import { decodeUtf8Marking, escapeMarkedBytes, holdsMarkedByte } from '../../src/contract/index.js'

test('UTF-8 decodes as itself; each byte of no well-formed character is marked, the first named', () => {
  const text = 'Bé€𝄞\ufffd\u{10080}'
  assert.deepEqual(decodeUtf8Marking(Buffer.from(text)), { text, firstBadByte: null })
  // a pair whose low half lies in the marks' range is a character, no mark
  assert.equal(holdsMarkedByte(text), false)
  const cases: [number[], string, number][] = [
    [[0x42, 0xff], 'B\udcff', 1],
    [[0xc0, 0xaf], '\udcc0\udcaf', 0], // overlong '/'
    [[0xed, 0xa0, 0x80], '\udced\udca0\udc80', 0], // a surrogate encoded
    [[0x61, 0xf0, 0x9f, 0x98], 'a\udcf0\udc9f\udc98', 1], // a 4-byte character cut short
    [[0xe2, 0x82, 0xac, 0x80, 0x62], '€\udc80b', 3],
  ]
  for (const [bytes, expected, first] of cases) {
    const decoded = decodeUtf8Marking(Uint8Array.from(bytes))
    assert.deepEqual(decoded, { text: expected, firstBadByte: first }, String(bytes))
    assert.equal(holdsMarkedByte(decoded.text), true)
  }
  assert.equal(escapeMarkedBytes('{"a":"B\udcff\u{10080}"}'), '{"a":"B\\udcff\u{10080}"}')
  assert.equal(JSON.parse(escapeMarkedBytes('"B\udcff"')), 'B\udcff')
})

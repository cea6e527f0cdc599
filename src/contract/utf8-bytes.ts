import { isUtf8 } from 'node:buffer'

/**
 * Text read from bytes that may not be UTF-8, losing nothing: a byte that is no part of a well-formed UTF-8
 * character becomes the lone surrogate U+DC00 + byte (U+DC80 to U+DCFF, as Python's `surrogateescape`), where a
 * plain decode would read it as U+FFFD and the text would say something nobody sent ("B\uFFFD" searched for, a
 * param written). A lone surrogate is refused wherever text is inspected (`hasLoneSurrogate`), so a request holding
 * such a byte is refused naming where, and U+FFFD sent as itself stays what it is. `firstBadByte`: the offset of
 * the first such byte, null for UTF-8.
 *
 * @example decodeUtf8Marking(Buffer.from([0x42, 0xff])) // { text: 'B\udcff', firstBadByte: 1 }
 */
export function decodeUtf8Marking(bytes: Uint8Array): { readonly text: string; readonly firstBadByte: number | null } {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (isUtf8(buffer)) return { text: buffer.toString('utf8'), firstBadByte: null }
  let text = ''
  let run = 0
  let firstBadByte: number | null = null
  for (let i = 0; i < buffer.length; ) {
    const length = sequenceAt(buffer, i)
    if (length > 0) {
      i += length
      continue
    }
    firstBadByte ??= i
    text += buffer.toString('utf8', run, i) + String.fromCharCode(0xdc00 + buffer[i]!)
    i += 1
    run = i
  }
  return { text: text + buffer.toString('utf8', run), firstBadByte }
}

/** A marked byte of {@link decodeUtf8Marking} (a lone low surrogate U+DC80 to U+DCFF). */
const MARKED_BYTE = /(?<![\uD800-\uDBFF])[\uDC80-\uDCFF]/

/** Whether the text holds a lone surrogate that may be a byte {@link decodeUtf8Marking} marked (or one sent so, escaped). */
export function holdsMarkedByte(text: string): boolean {
  return MARKED_BYTE.test(text)
}

/** The text with each marked byte written as its JSON escape (`\udcff`), for a JSON text passed on as UTF-8: re-encoded raw, it would become U+FFFD. */
export function escapeMarkedBytes(jsonText: string): string {
  return jsonText.replace(new RegExp(MARKED_BYTE.source, 'g'), (mark) => `\\u${mark.charCodeAt(0).toString(16)}`)
}

/** The length of the well-formed UTF-8 character starting at `i`, or 0 (the Unicode Standard, table 3-7). */
function sequenceAt(b: Uint8Array, i: number): number {
  const lead = b[i]!
  const follows = (j: number, low = 0x80, high = 0xbf) => j < b.length && b[j]! >= low && b[j]! <= high
  if (lead < 0x80) return 1
  if (lead >= 0xc2 && lead <= 0xdf) return follows(i + 1) ? 2 : 0
  if (lead >= 0xe0 && lead <= 0xef) return follows(i + 1, lead === 0xe0 ? 0xa0 : 0x80, lead === 0xed ? 0x9f : 0xbf) && follows(i + 2) ? 3 : 0
  if (lead >= 0xf0 && lead <= 0xf4) return follows(i + 1, lead === 0xf0 ? 0x90 : 0x80, lead === 0xf4 ? 0x8f : 0xbf) && follows(i + 2) && follows(i + 3) ? 4 : 0
  return 0
}

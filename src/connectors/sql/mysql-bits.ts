/** The widest BIT(n) read as a number: 6 bytes (48 bits) stay exact in a double; wider ones stay bytes. */
const EXACT_BYTES = 6

/**
 * A BIT(n) value as the number its bits spell (big-endian, as the server sends it), or the bytes where n is past 48.
 * The driver hands BIT as a Buffer, which no declared type judges: every row of a BIT(1) flag (MySQL's usual boolean
 * beside TINYINT(1)) was left out as SHAPE_MISMATCH, a filter `ok: true` answered nothing, incomplete. As a number
 * it is judged as a TINYINT(1) is (a boolean field over a number column), and the engine compares BIT with numbers
 * by value, so the SQL of a filter or a precondition holds for it. An id column of BIT stays refused (table-facts.ts).
 *
 * @example bitValue(Buffer.from([0b101])) // 5
 */
export function bitValue(bytes: Buffer): number | Buffer {
  if (bytes.length > EXACT_BYTES) return bytes
  let n = 0
  for (const byte of bytes) n = n * 256 + byte
  return n
}

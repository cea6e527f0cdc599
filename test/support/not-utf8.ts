/** `text` as UTF-8 bytes, each `@` replaced by the byte 0xFF, which no UTF-8 text holds. */
export function withByteFF(text: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(Buffer.concat(text.split('@').flatMap((part, i) => (i === 0 ? [Buffer.from(part)] : [Buffer.from([0xff]), Buffer.from(part)]))))
}

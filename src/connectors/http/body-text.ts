const utf8 = new TextDecoder('utf-8', { fatal: true })
const ASCII = Uint8Array.from({ length: 128 }, (_, i) => i)
const ASCII_TEXT = String.fromCharCode(...ASCII)

/**
 * A body's text as its Content-Type's charset says, or null with why it has none (`unreadable`). UTF-8 (declared
 * or not) is decoded strictly. Another charset is read only where every byte is ASCII, which it and UTF-8 read
 * alike: its other bytes are never guessed. Read as UTF-8, latin-1 "Ã©" became "é" without a word; decoded as
 * declared, a replacing write would send the record back as UTF-8 to an upstream that reads latin-1, changing
 * fields no action set (and servers that declare latin-1 over UTF-8 bytes exist too). JSON is UTF-8 (RFC 8259).
 */
export function textOf(bytes: Uint8Array, contentType: string | null | undefined): { readonly body: string | null; readonly unreadable?: string } {
  const charset = charsetOf(contentType ?? '')
  if (charset === null || isUtf8(charset)) {
    try {
      return { body: utf8.decode(bytes) }
    } catch {
      return { body: null, unreadable: 'it is not UTF-8' }
    }
  }
  if (!readsAsciiAsAscii(charset)) return { body: null, unreadable: `it declares charset=${shown(charset)}, which Warrant does not read (it reads UTF-8, and ASCII under a charset that keeps it)` }
  if (bytes.every((byte) => byte < 0x80)) return { body: Buffer.from(bytes).toString('latin1') }
  return { body: null, unreadable: `it declares charset=${shown(charset)} and holds bytes outside ASCII, which Warrant does not guess at (it reads UTF-8; JSON is UTF-8)` }
}

/** The media type of a Content-Type (`text/html`), lower-cased, to name in a message; null when there is none. */
export function mediaTypeOf(contentType: string | null): string | null {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase()
  return type === '' ? null : shown(type)
}

/** An upstream's header value as a message quotes it: a token as is, anything else quoted and cut. */
function shown(value: string): string {
  return /^[\w.:+/-]{1,60}$/.test(value) ? value : JSON.stringify(value.slice(0, 60))
}

/** The `charset` parameter of a Content-Type, unquoted and lower-cased, or null. */
function charsetOf(contentType: string): string | null {
  const match = /;\s*charset\s*=\s*("([^"]*)"|[^;\s]*)/i.exec(contentType)
  if (!match) return null
  const value = (match[2] ?? match[1] ?? '').trim().toLowerCase()
  return value === '' ? null : value
}

function isUtf8(label: string): boolean {
  return label === 'utf-8' || label === 'utf8' || decoderFor(label)?.encoding === 'utf-8'
}

/** Whether a charset reads each ASCII byte as that character (latin-1, windows-1252 do; UTF-16 does not). */
function readsAsciiAsAscii(label: string): boolean {
  const decoder = decoderFor(label)
  return decoder !== null && decoder.decode(ASCII) === ASCII_TEXT
}

function decoderFor(label: string): TextDecoder | null {
  try {
    return new TextDecoder(label)
  } catch {
    return null
  }
}

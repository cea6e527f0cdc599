/** What a secret is replaced with wherever upstream text is passed on. */
export const REDACTED = '[redacted]'

/** Removes the credential from anything the connector passes on: messages, bodies, record fields. */
export interface Redactor {
  text(value: string): string
  deep<T>(value: T): T
}

/**
 * A redactor for one secret. It replaces the secret as written and as an upstream that echoes it back writes it
 * encoded: inside a JSON string (escaped, "/" as "\/" as PHP writes it, any character as \uXXXX) or in a URL
 * (percent-encoded, either case of hex), each character in any of these forms. A base64 key ("/", "+", "=")
 * in a next link the upstream built went into the agent's cursor percent-encoded, and a PHP error body quoted it.
 *
 * @example createRedactor('sk-1').text('bad token sk-1') // 'bad token [redacted]'
 * @example createRedactor('a/b+c').text('next?key=a%2Fb%2bc') // 'next?key=[redacted]'
 */
export function createRedactor(secret: string | null): Redactor {
  if (secret === null || secret === '') return { text: (v) => v, deep: (v) => v }
  const forms = [...new Set([secret, JSON.stringify(secret).slice(1, -1)])].sort((a, b) => b.length - a.length)
  const encoded = new RegExp([...secret].map(writtenForms).join(''), 'g')
  const text = (value: string): string => {
    let out = value
    for (const form of forms) out = out.split(form).join(REDACTED)
    // an escaped or encoded form has a "%" or a backslash in it; most text has neither, and skips the pattern
    return out.includes('%') || out.includes('\\') ? out.replace(encoded, REDACTED) : out
  }
  const deep = (value: unknown): unknown => {
    if (typeof value === 'string') return text(value)
    if (Array.isArray(value)) return value.map(deep)
    if (value !== null && typeof value === 'object')
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [text(k), deep(v)]))
    return value
  }
  return { text, deep: <T>(value: T) => deep(value) as T }
}

/** A pattern for one character of the secret as it may be written: itself, percent-encoded, JSON-escaped. */
function writtenForms(ch: string): string {
  const percent = [...Buffer.from(ch, 'utf8')].map((byte) => `%${anyCaseHex(byte, 2)}`).join('')
  // JSON escapes UTF-16 code units: a character beyond the BMP is two \uXXXX
  const unicode = [...Array(ch.length).keys()].map((i) => `\\\\u${anyCaseHex(ch.charCodeAt(i), 4)}`).join('')
  const json = ch === '/' ? ['\\\\/'] : ch === '"' || ch === '\\' ? [`\\\\\\${ch}`] : []
  return `(?:${[ch.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'), percent, unicode, ...json].join('|')})`
}

function anyCaseHex(value: number, width: number): string {
  return [...value.toString(16).padStart(width, '0')].map((digit) => (/[a-f]/.test(digit) ? `[${digit}${digit.toUpperCase()}]` : digit)).join('')
}

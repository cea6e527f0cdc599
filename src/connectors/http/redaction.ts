/** What a secret is replaced with wherever upstream text is passed on. */
export const REDACTED = '[redacted]'

/** Removes the credential from anything the connector passes on: messages, bodies, record fields. */
export interface Redactor {
  text(value: string): string
  deep<T>(value: T): T
}

/**
 * A redactor for one secret. It replaces the secret as written and as it appears inside a JSON string
 * (escaped), so an upstream that echoes the credential back cannot leak it through the gateway.
 *
 * @example createRedactor('sk-1').text('bad token sk-1') // 'bad token [redacted]'
 */
export function createRedactor(secret: string | null): Redactor {
  if (secret === null || secret === '') return { text: (v) => v, deep: (v) => v }
  const forms = [...new Set([secret, JSON.stringify(secret).slice(1, -1)])].sort((a, b) => b.length - a.length)
  const text = (value: string): string => {
    let out = value
    for (const form of forms) out = out.split(form).join(REDACTED)
    return out
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

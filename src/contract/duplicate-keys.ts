import { walkJsonText } from './json-text.js'

/**
 * The first object key that appears twice in a JSON text, with its path, or null. `JSON.parse` keeps only the
 * last of two equal keys, so `{"filter": {"status": "a", "status": "b"}}` would silently become a query for
 * `b`; every surface refuses such a body instead. Expects text `JSON.parse` accepts.
 *
 * @example duplicateKeyOf('{"filter":{"status":"a","status":"b"}}') // { path: 'filter', key: 'status' }
 */
export function duplicateKeyOf(text: string): { readonly path: string; readonly key: string } | null {
  let found: { path: string; key: string } | null = null
  walkJsonText(text, {
    key: (path, key, earlier) => {
      if (earlier.has(key)) found = { path, key }
      return found !== null
    },
  })
  return found
}

/** A key an object of a JSON text names twice: the path of that object ("" for the top level) and the key. */
export interface DuplicateKey {
  readonly path: string
  readonly key: string
}

const NO_DUPLICATES: readonly DuplicateKey[] = []

/**
 * Every key a JSON text names twice in one object, or none. `parsed` is `JSON.parse(text)`: its keys and the
 * colons inside its strings account for every colon of a text without a repeated key, so almost every body
 * is cleared by that count (a fifth of the parse's time) without walking the text (eight parses' time). A
 * colon written `\u003a` is not in the text as a colon: such a text is always walked.
 */
export function duplicateKeysOf(text: string, parsed: unknown): readonly DuplicateKey[] {
  if (!/\\u003a/i.test(text) && colonsIn(text) === keysAndColonsIn(parsed)) return NO_DUPLICATES
  const found: DuplicateKey[] = []
  walkJsonText(text, {
    key: (path, key, earlier) => {
      if (earlier.has(key)) found.push({ path, key })
      return false
    },
  })
  return found
}

function colonsIn(text: string): number {
  let count = 0
  for (let at = text.indexOf(':'); at !== -1; at = text.indexOf(':', at + 1)) count += 1
  return count
}

/** The keys of every object in a parsed value, plus the colons its keys and strings hold. */
function keysAndColonsIn(value: unknown): number {
  if (typeof value === 'string') return colonsIn(value)
  if (value === null || typeof value !== 'object') return 0
  let count = 0
  if (Array.isArray(value)) {
    for (const item of value) count += keysAndColonsIn(item)
    return count
  }
  for (const [key, inner] of Object.entries(value)) count += 1 + colonsIn(key) + keysAndColonsIn(inner)
  return count
}

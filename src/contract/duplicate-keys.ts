/**
 * The first object key that appears twice in a JSON text, with its path, or null. `JSON.parse` keeps only the
 * last of two equal keys, so `{"filter": {"status": "a", "status": "b"}}` would silently become a query for
 * `b`; every surface refuses such a body instead. Expects text `JSON.parse` accepts.
 *
 * @example duplicateKeyOf('{"filter":{"status":"a","status":"b"}}') // { path: 'filter', key: 'status' }
 */
export function duplicateKeyOf(text: string): { readonly path: string; readonly key: string } | null {
  let i = 0
  const skipSpace = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i += 1
  }
  const readString = (): string => {
    const start = i
    i += 1
    while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1
    i += 1
    return JSON.parse(text.slice(start, i)) as string
  }
  const value = (path: string): { path: string; key: string } | null => {
    skipSpace()
    const c = text[i]
    if (c === '"') {
      readString()
      return null
    }
    if (c === '{' || c === '[') {
      const object = c === '{'
      const seen = new Set<string>()
      i += 1
      skipSpace()
      for (let index = 0; text[i] !== (object ? '}' : ']'); index += 1) {
        let inner = `${path}${path ? '.' : ''}${index}`
        if (object) {
          skipSpace()
          const key = readString()
          if (seen.has(key)) return { path, key }
          seen.add(key)
          inner = `${path}${path ? '.' : ''}${key}`
          skipSpace()
          i += 1 // the colon
        }
        const found = value(inner)
        if (found) return found
        skipSpace()
        if (text[i] === ',') i += 1
        skipSpace()
      }
      i += 1
      return null
    }
    while (i < text.length && !',}] \t\n\r'.includes(text[i]!)) i += 1
    return null
  }
  return value('')
}

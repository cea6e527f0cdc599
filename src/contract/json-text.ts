/** What {@link walkJsonText} reports; a visitor answering true stops the walk there. */
export interface JsonTextVisitor {
  /** An object's key, with the path of that object and the keys it named before this one. */
  key?(path: string, key: string, earlier: ReadonlySet<string>): boolean
  /** A number literal as written, with its path. */
  number?(path: string, literal: string): boolean
}

/**
 * Walks a JSON text as written, not as parsed: `JSON.parse` keeps only the last of two equal keys and turns every
 * number into a double, so what the sender wrote is only in the text. Paths join keys and array indexes with
 * dots (`filter.amount_due.in.2`); the top level is "". Expects text `JSON.parse` accepts.
 */
export function walkJsonText(text: string, visitor: JsonTextVisitor): void {
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
  /** True when a visitor stopped the walk. */
  const value = (path: string): boolean => {
    skipSpace()
    const c = text[i]
    if (c === '"') {
      readString()
      return false
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
          if (visitor.key?.(path, key, seen)) return true
          seen.add(key)
          inner = `${path}${path ? '.' : ''}${key}`
          skipSpace()
          i += 1 // the colon
        }
        if (value(inner)) return true
        skipSpace()
        if (text[i] === ',') i += 1
        skipSpace()
      }
      i += 1
      return false
    }
    const start = i
    while (i < text.length && !',}] \t\n\r'.includes(text[i]!)) i += 1
    return c !== 't' && c !== 'f' && c !== 'n' && visitor.number?.(path, text.slice(start, i)) === true
  }
  value('')
}

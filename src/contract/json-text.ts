/** What {@link walkJsonText} reports; a visitor answering true stops the walk there. */
export interface JsonTextVisitor {
  /** An object's key, with the path of that object and the keys it named before this one. */
  key?(path: string, key: string, earlier: ReadonlySet<string>): boolean
  /** A number literal as written, with its path. */
  number?(path: string, literal: string): boolean
}

/** An object or array the walk is inside: its path, the keys it named so far (objects), and its next index. */
interface Open {
  readonly path: string
  readonly seen: Set<string> | null
  index: number
}

/**
 * Walks a JSON text as written, not as parsed: `JSON.parse` keeps only the last of two equal keys and turns every
 * number into a double, so what the sender wrote is only in the text. Paths join keys and array indexes with
 * dots (`filter.amount_due.in.2`); the top level is "". Expects text `JSON.parse` accepts.
 *
 * Why a stack of open containers rather than recursion: `JSON.parse` takes any nesting, and this walk runs on
 * text before any depth check can see it (a `warrant mcp` stdin line, an /mcp body of any content type), so a
 * recursive walk threw RangeError on a line nested some 8,000 deep and took the stdio server down with it.
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
  const open: Open[] = []
  let path = ''
  for (;;) {
    // one value at `path`: a container is opened (its members come next), a scalar read whole
    skipSpace()
    const c = text[i]
    if (c === '{' || c === '[') {
      open.push({ path, seen: c === '{' ? new Set() : null, index: 0 })
      i += 1
    } else if (c === '"') readString()
    else {
      const start = i
      while (i < text.length && !',}] \t\n\r'.includes(text[i]!)) i += 1
      if (c !== 't' && c !== 'f' && c !== 'n' && visitor.number?.(path, text.slice(start, i)) === true) return
    }
    // then the next member of the innermost open container, closing each that has none left
    for (;;) {
      const top = open[open.length - 1]
      if (!top) return
      skipSpace()
      if (text[i] === ',') i += 1
      skipSpace()
      if (text[i] === '}' || text[i] === ']') {
        i += 1
        open.pop()
        continue
      }
      const index = top.index
      top.index += 1
      if (top.seen) {
        const key = readString()
        if (visitor.key?.(top.path, key, top.seen)) return
        top.seen.add(key)
        path = `${top.path}${top.path ? '.' : ''}${key}`
        skipSpace()
        i += 1 // the colon
      } else path = `${top.path}${top.path ? '.' : ''}${index}`
      break
    }
  }
}

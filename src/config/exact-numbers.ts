import { isPair, isScalar, parseDocument, visit } from 'yaml'
import { doubleHolds, roundedLiteralOf } from '../contract/index.js'

/** A config key and what is wrong there, as `parseConfig` lists them. */
export interface ConfigProblem {
  readonly key: string
  readonly message: string
}

/**
 * The number literals of a config file its parser reads as another value: 9007199254740993 as …992, 1e-400 as
 * zero, 12345678901234567.89 as …68, and (YAML) .inf and .nan, which no JSON number carries. A precondition, a
 * value an action sets or a standing approval's selector would otherwise hold a number nobody wrote. YAML's own
 * spellings of a number (0x10, 0o17) mean what YAML says and are kept.
 */
export function roundedConfigNumbers(text: string, json: boolean): ConfigProblem[] {
  if (json) {
    const found = roundedLiteralOf(text)
    return found === null ? [] : [{ key: found.path || '(root)', message: messageOf(found.literal, found.read_as) }]
  }
  const problems: ConfigProblem[] = []
  visit(parseDocument(text), {
    Scalar(key, node, path) {
      if (typeof node.value !== 'number' || key === 'key') return
      const source = node.source ?? String(node.value)
      if (Number.isFinite(node.value) && doubleHolds(source)) return
      const keys = path.filter(isPair).map((pair) => (isScalar(pair.key) ? String(pair.key.value) : '?'))
      // a list item: its index, so the key names the place as the schema's messages do
      const parent = path[path.length - 1]
      if (parent !== undefined && !isPair(parent) && typeof key === 'number') keys.push(String(key))
      problems.push({ key: keys.join('.') || '(root)', message: messageOf(source, String(node.value)) })
    },
  })
  return problems
}

function messageOf(literal: string, readAs: string): string {
  return `the number ${literal} is not one a JSON number (a double) holds exactly; it would be read as ${readAs}. Write at most 15 significant digits (integers within ±9007199254740991), or quote it where the field takes text`
}

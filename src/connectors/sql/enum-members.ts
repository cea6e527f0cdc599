import type { Row } from './backend.js'
import type { SqlDialectName } from './url.js'

/**
 * An ENUM's or SET's members from the catalogue's `column_type` (`enum('free','pro','it''s')`, quotes doubled):
 * the only strings such a column keeps as written. Nothing for any other column, or a type that does not parse.
 */
export function membersOf(dialect: SqlDialectName, declared: string, row: Row): { members?: { readonly values: readonly string[]; readonly multiple: boolean } } {
  if (dialect !== 'mysql' || !/^(enum|set)$/i.test(declared)) return {}
  const full = /^(?:enum|set)\((.*)\)$/is.exec(String(row.column_type ?? ''))
  if (full === null || !/^'(?:[^'\\]|'')*'(?:,'(?:[^'\\]|'')*')*$/s.test(full[1]!)) return {}
  const values = [...full[1]!.matchAll(/'((?:[^']|'')*)'/gs)].map((m) => m[1]!.replaceAll("''", "'"))
  return { members: { values, multiple: declared.toLowerCase() === 'set' } }
}

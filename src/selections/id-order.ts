/**
 * The frozen order of a selection: ascending by id in Unicode code-point order, the order SQLite's BINARY
 * collation and PostgreSQL's "C" collation give UTF-8 text. JavaScript's `<` compares UTF-16 code units,
 * which differs from it only when a surrogate pair is involved.
 */
const SURROGATE = /[\uD800-\uDFFF]/

/** Negative, zero or positive as `a` sorts before, with or after `b` in code-point order. */
export function compareIds(a: string, b: string): number {
  if (a === b) return 0
  if (!SURROGATE.test(a) && !SURROGATE.test(b)) return a < b ? -1 : 1
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'))
}

/** The ordering a selection's pages name. */
export const MEMBER_ORDERING = 'id ascending (Unicode code points), frozen'

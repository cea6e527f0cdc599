/**
 * The first id one answer gives to two different records, or null. One answer is one moment of the upstream:
 * two records in it under one id are no data moving, but an `id_field` that names no one record (a status, a
 * customer id on an orders list), and every reader after the page (the walk's seen filter, a selection, a write by
 * id) would take them for one. The same record twice (identical JSON) is left to the walk, which drops the copy.
 *
 * @example repeatedId([['a', {id: 'a', n: 1}], ['a', {id: 'a', n: 2}]]) // 'a'
 */
export function repeatedId(items: readonly (readonly [id: string | undefined, item: unknown])[]): string | null {
  const seen = new Map<string, string>()
  for (const [id, item] of items) {
    if (id === undefined) continue
    const text = JSON.stringify(item)
    const before = seen.get(id)
    if (before === undefined) seen.set(id, text)
    else if (before !== text) return id
  }
  return null
}

/**
 * The first id one answer gives to two different records, or null. One answer is one moment of the upstream:
 * two records in it under one id are no data moving, but an `id_field` that names no one record (a status, a
 * customer id on an orders list), and every reader after the page (the walk's seen filter, a selection, a write by
 * id) would take them for one. The same record twice (identical JSON at `record_path`: two view rows of one
 * document) is left to the walk, which drops the copy.
 *
 * @example repeatedId([['a', {id: 'a', n: 1}], ['a', {id: 'a', n: 2}]]) // 'a'
 */
export function repeatedId(items: readonly (readonly [id: string | undefined, item: unknown])[]): string | null {
  // items are serialised only when their id comes back: a page of distinct ids (the usual case) is read once
  const seen = new Map<string, unknown>()
  for (const [id, item] of items) {
    if (id === undefined) continue
    if (!seen.has(id)) seen.set(id, item)
    else if (JSON.stringify(seen.get(id)) !== JSON.stringify(item)) return id
  }
  return null
}

/**
 * The first keyset key one answer gives to two records of different ids, or null. Keyset paging starts the next
 * page after the last item's key, so on a field records share, those sharing a page's last key are never read,
 * the data standing still; a page holding two under one key proves the field is not unique. Keys compare as
 * JSON, so 7 and "7" differ, as a start key does.
 */
export function sharedKey(items: readonly (readonly [id: string | undefined, key: string | number | null])[]): { readonly key: string | number; readonly ids: readonly [string, string] } | null {
  const first = new Map<string, string>()
  for (const [id, key] of items) {
    if (id === undefined || key === null) continue
    const text = JSON.stringify(key)
    const other = first.get(text)
    if (other === undefined) first.set(text, id)
    else if (other !== id) return { key, ids: [other, id] }
  }
  return null
}

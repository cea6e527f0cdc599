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

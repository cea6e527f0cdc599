import type { DuplicateKey } from '../../contract/index.js'
import type { HttpContext } from './context.js'
import { fieldPath } from './record.js'

/**
 * Where an upstream body names a key twice in one object, `JSON.parse` kept the last value; the upstream's own
 * parser, a proxy or a log may keep the first (`{"status":"past_due","status":"active"}`), so which one the
 * upstream means is unknown. Such a value is never taken as the upstream's: a record is unjudged on the fields
 * it touches, a paging signal refuses the page, a read by id or a write's answer is not taken as the record.
 */

/** Item-level duplicates of a list answer by item index (paths inside the item), and those outside any item. */
export function splitByItem(itemsPath: string, duplicates: readonly DuplicateKey[]): { readonly byItem: ReadonlyMap<number, readonly string[]>; readonly outside: readonly DuplicateKey[] } {
  const byItem = new Map<number, string[]>()
  const outside: DuplicateKey[] = []
  const prefix = itemsPath === '' ? '' : `${itemsPath}.`
  for (const duplicate of duplicates) {
    const at = /^(0|[1-9][0-9]*)(?:\.|$)/.exec(duplicate.path.startsWith(prefix) ? duplicate.path.slice(prefix.length) : '')
    if (at === null) {
      outside.push(duplicate)
      continue
    }
    const index = Number(at[1])
    const inside = duplicate.path.slice(prefix.length + at[0].length)
    const list = byItem.get(index) ?? []
    list.push(inside === '' ? duplicate.key : `${inside}.${duplicate.key}`)
    byItem.set(index, list)
  }
  return { byItem, outside }
}

/**
 * The declared fields (and the version member of an ETag-versioned list) whose value lies at, inside or around
 * a duplicated key of an item; `recordPath` places the record inside the item. Empty: the declared record is whole.
 */
export function fieldsTouched(ctx: HttpContext, recordPath: string, duplicated: readonly string[]): string[] {
  const inRecord = (path: string) => (recordPath === '' ? path : `${recordPath}.${path}`)
  const paths: [string, string][] = Object.keys(ctx.resource.fields).map((field) => [field, inRecord(fieldPath(ctx, field))])
  if (ctx.config.version.from === 'etag') for (const member of ['etag', '_etag', 'version']) paths.push(['etag', inRecord(member)])
  const touched = new Set<string>()
  for (const [field, path] of paths)
    if (duplicated.some((key) => key === path || path.startsWith(`${key}.`) || key.startsWith(`${path}.`))) touched.add(field)
  return [...touched]
}

/** `"status" twice in one object (at "items.1")`, for a message. */
export function duplicateText(duplicate: DuplicateKey): string {
  return `"${duplicate.key}" twice in one object${duplicate.path === '' ? '' : ` (at "${duplicate.path}")`}`
}

/** Why a body naming keys twice is not taken as a record. */
export function duplicatesProblem(duplicates: readonly DuplicateKey[]): string {
  return `the answer names ${duplicates.map(duplicateText).join(', ')}; which value the upstream means cannot be known (a JSON parser keeps either)`
}

/**
 * Reads a dotted path (`meta.next_cursor`, `data.items`, `results.0.id`) out of a parsed JSON value.
 * The empty path is the value itself (a bare array body). Only own properties are followed, so
 * `__proto__` or `constructor` in a config never reaches into the prototype chain.
 *
 * @example readPath({ meta: { next: 'c2' } }, 'meta.next') // 'c2'
 * @example readPath([1, 2], '') // [1, 2]
 */
export function readPath(value: unknown, path: string): unknown {
  if (path === '') return value
  let current: unknown = value
  for (const key of path.split('.')) {
    if (Array.isArray(current)) {
      if (!/^(0|[1-9][0-9]*)$/.test(key)) return undefined
      current = current[Number(key)]
    } else if (current !== null && typeof current === 'object') {
      if (!Object.hasOwn(current, key)) return undefined
      current = (current as Record<string, unknown>)[key]
    } else {
      return undefined
    }
  }
  return current
}

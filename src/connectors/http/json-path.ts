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

/**
 * Sets a dotted path inside a JSON object, in place, creating the objects on the way that are missing. It
 * never replaces a value that is not an object on the way (that would erase it): it throws instead.
 *
 * @example const doc = { a: { b: 1, c: 2 } }; writePath(doc, 'a.b', 5) // doc is { a: { b: 5, c: 2 } }
 */
export function writePath(target: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.')
  let current: unknown = target
  keys.forEach((key, i) => {
    const last = i === keys.length - 1
    const container = current as Record<string, unknown> | unknown[]
    if (Array.isArray(container)) {
      const index = /^(0|[1-9][0-9]*)$/.test(key) ? Number(key) : -1
      if (index < 0 || index >= container.length) throw new Error(`"${path}": "${key}" is not an index of the list there`)
      if (last) container[index] = value
      else current = container[index]
    } else {
      const has = Object.hasOwn(container, key)
      if (last || !has) Object.defineProperty(container, key, { value: last ? value : {}, enumerable: true, writable: true, configurable: true })
      current = container[key]
    }
    if (!last && (current === null || typeof current !== 'object'))
      throw new Error(`"${path}": "${keys.slice(0, i + 1).join('.')}" holds a value that is not an object; it would be erased`)
  })
}

/**
 * Where a parsed value holds an own `__proto__` key (JSON.parse and YAML both make one), as dotted paths.
 * zod's records and objects skip such a key without a word, so a filter condition, a field or a setting under
 * that name would silently not be there: a filter would then match more than it says. Whatever parses input
 * with a schema refuses these first, naming them.
 *
 * @example protoKeyPaths(JSON.parse('{"filter": {"__proto__": {"eq": 1}}}'), ['request']) // ['request.filter.__proto__']
 */
export function protoKeyPaths(value: unknown, path: readonly string[] = [], seen = new WeakSet<object>()): string[] {
  // a YAML alias can point back at its own anchor: each object is looked into once
  if (value === null || typeof value !== 'object' || seen.has(value)) return []
  seen.add(value)
  if (Array.isArray(value)) return value.flatMap((item, i) => protoKeyPaths(item, [...path, String(i)], seen))
  return Object.entries(value).flatMap(([key, member]) => (key === '__proto__' ? [[...path, key].join('.')] : protoKeyPaths(member, [...path, key], seen)))
}

/**
 * How deep an upstream's JSON may nest. `JSON.parse` takes any nesting, but the walks over a parsed body that
 * follow it (keys counted for duplicates, the credential redacted, denied values scrubbed) recurse: 400 KB of
 * brackets, well under `max_response_bytes`, overflowed the stack, and the RangeError read as a failure that
 * may clear (retried for ever) and lost the status the upstream answered. No record nests anywhere near this.
 */
export const MAX_JSON_DEPTH = 512

/** Whether a parsed JSON value holds arrays or objects nested more than `limit` deep; without recursion. */
export function nestedDeeperThan(value: unknown, limit = MAX_JSON_DEPTH): boolean {
  if (value === null || typeof value !== 'object') return false
  const pending: [object, number][] = [[value, 1]]
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [container, depth] = next
    if (depth > limit) return true
    for (const inner of Array.isArray(container) ? container : Object.values(container))
      if (inner !== null && typeof inner === 'object') pending.push([inner as object, depth + 1])
  }
  return false
}

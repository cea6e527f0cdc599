import type { GroupCount } from './selection-service.js'

/** Values listed per group-by field; the rest are counted in `other_count`. */
export const GROUP_VALUES_MAX = 100
/** Distinct values counted in memory per field; a field with more is counted by the store after the walk. */
const DISTINCT_TRACKED_MAX = 20_000

/**
 * Counts per value of each group-by field, kept while the members stream in (no scans of the frozen rows
 * afterwards). Values are keyed by their JSON text, as the store's JSON columns hold them; a missing field
 * counts as null. A field with more distinct values than can be kept in memory is left to the store.
 */
export class GroupTally {
  /** per field: counts keyed by the value's JSON text, and string values by themselves (no JSON.stringify per member) */
  readonly #counts = new Map<string, { readonly byJson: Map<string, number>; readonly strings: Map<string, number> }>()
  readonly #overflowed = new Set<string>()

  constructor(readonly fields: readonly string[]) {
    for (const field of fields) this.#counts.set(field, { byJson: new Map(), strings: new Map() })
  }

  add(values: Readonly<Record<string, unknown>>): void {
    for (const [field, counts] of this.#counts) {
      const value = Object.hasOwn(values, field) ? values[field] : null
      // a string's JSON text is itself quoted: it cannot be the key of a value of another type
      const map = typeof value === 'string' ? counts.strings : counts.byJson
      const key = typeof value === 'string' ? value : JSON.stringify(value ?? null)
      const seen = map.get(key)
      if (seen !== undefined) map.set(key, seen + 1)
      else if (counts.strings.size + counts.byJson.size < DISTINCT_TRACKED_MAX) map.set(key, 1)
      else {
        this.#overflowed.add(field)
        this.#counts.delete(field)
      }
    }
  }

  /** Fields whose counts were given up (too many distinct values): the store counts them. */
  get overflowed(): readonly string[] {
    return [...this.#overflowed]
  }

  /** The counts of one field that was kept: most frequent first, ties by value text; the rest in `other_count`. */
  countsOf(field: string, total: number): GroupCount | null {
    const kept = this.#counts.get(field)
    if (!kept) return null
    const counts = new Map(kept.byJson)
    for (const [value, count] of kept.strings) counts.set(JSON.stringify(value), count)
    const ranked = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    const listed = ranked.slice(0, GROUP_VALUES_MAX).map(([key, count]) => ({ value: JSON.parse(key) as unknown, count }))
    const covered = listed.reduce((sum, v) => sum + v.count, 0)
    return { field, values: listed, distinct: counts.size, complete: counts.size <= GROUP_VALUES_MAX, other_count: total - covered }
  }
}

import type { VersionlessRecords } from './connector.js'

/**
 * Counts the records of a page that cannot be judged (a declared field absent, or of another type than declared,
 * or no version to freeze) and names their fields: the page's `unjudged`, which makes the walk say not complete.
 */
export function createShapeTally() {
  let count = 0
  const absent = new Set<string>()
  const mistyped = new Set<string>()
  let versionless: VersionlessRecords | null = null
  return {
    add(missing: readonly string[], wrong: readonly string[]): void {
      count += 1
      for (const f of missing) absent.add(f)
      for (const f of wrong) mistyped.add(f)
    },
    /** A record with no version: `field` the version field, undefined for an ETag. */
    addVersionless(field: string | undefined): void {
      count += 1
      versionless = { ...(field === undefined ? {} : { field }), count: (versionless?.count ?? 0) + 1 }
    },
    result(): { count: number; absent: string[]; mistyped: string[]; versionless?: VersionlessRecords } | null {
      return count === 0 ? null : { count, absent: [...absent].sort(), mistyped: [...mistyped].sort(), ...(versionless === null ? {} : { versionless }) }
    },
  }
}

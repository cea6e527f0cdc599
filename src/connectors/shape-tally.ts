/**
 * Counts the records of a page that cannot be judged (a declared field absent, or of another type than declared)
 * and names their fields: the page's `unjudged`, which makes the walk say not complete.
 */
export function createShapeTally() {
  let count = 0
  const absent = new Set<string>()
  const mistyped = new Set<string>()
  return {
    add(missing: readonly string[], wrong: readonly string[]): void {
      count += 1
      for (const f of missing) absent.add(f)
      for (const f of wrong) mistyped.add(f)
    },
    result(): { count: number; absent: string[]; mistyped: string[] } | null {
      return count === 0 ? null : { count, absent: [...absent].sort(), mistyped: [...mistyped].sort() }
    },
  }
}

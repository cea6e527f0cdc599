import type { SourceRecord } from '../connectors/connector.js'

/**
 * Tells a walk which records of a page it has already seen, per source. The default keeps the ids in memory;
 * a caller streaming millions of records can answer from its own store instead, so memory stays flat.
 */
export interface SeenFilter {
  /** The records of this page of `source` not seen before in this walk, in page order; it remembers them. */
  fresh(source: string, records: readonly SourceRecord[]): Promise<readonly SourceRecord[]> | readonly SourceRecord[]
}

/** The ids of every record seen, per source, in memory. */
export function memorySeenFilter(): SeenFilter {
  const bySource = new Map<string, Set<string>>()
  return {
    fresh(source, records) {
      let seen = bySource.get(source)
      if (!seen) bySource.set(source, (seen = new Set()))
      const out: SourceRecord[] = []
      for (const record of records) {
        if (seen.has(record.id)) continue
        seen.add(record.id)
        out.push(record)
      }
      return out
    },
  }
}

/**
 * Per source: how many records the seen filter dropped, and a bounded sample of their ids for the warning; `across`
 * counts those whose id an earlier page gave (a page's own repeats the connector has proven to be one record).
 */
export type DuplicateTally = Map<string, { count: number; sample: string[]; across: number }>

/** How many dropped duplicate ids a warning names (the count is always exact). */
const DUPLICATE_SAMPLE = 20

/**
 * Counts the records of a page the seen filter dropped. Matched by identity, not id: a filter returns the very
 * records it was given, and a page may itself repeat an id.
 */
export function tallyDuplicates(
  duplicates: DuplicateTally,
  source: string,
  page: readonly SourceRecord[],
  fresh: readonly SourceRecord[],
): void {
  if (fresh.length === page.length) return
  const kept = new Set(fresh)
  const keptIds = new Set(fresh.map((record) => record.id))
  const entry = duplicates.get(source) ?? { count: 0, sample: [], across: 0 }
  for (const record of page) {
    if (kept.has(record)) continue
    entry.count += 1
    if (!keptIds.has(record.id)) entry.across += 1
    if (entry.sample.length < DUPLICATE_SAMPLE) entry.sample.push(record.id)
  }
  duplicates.set(source, entry)
}

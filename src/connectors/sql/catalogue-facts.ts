import { performance } from 'node:perf_hooks'
import type { ColumnFacts } from './column-types.js'
import type { TableFacts } from './table-facts.js'

/** What the engine's catalogue says of a table at one moment; a part that could not be read is null. */
export interface CatalogueFacts {
  readonly columns: ColumnFacts | null
  readonly table: TableFacts | null
}

/** How old the facts a write relies on may be by default: a migration is seen within this. */
export const CATALOGUE_MAX_AGE_MS = 5_000

/**
 * The table's catalogue facts, read again as they age. A migration run while Warrant serves (a trigger added,
 * the table converted to MyISAM, a column retyped) must switch the guards built on them back on, so facts are
 * never kept for the connector's life:
 *
 * - `fresh()`: facts read from now on, for a read session's opening and an operation's run start (one read per
 *   walk or run, not per page or write).
 * - `recent()`: facts read less than `maxAgeMs` ago, for each write and read by id: a long run re-reads them
 *   every few seconds, and one read serves every window in between.
 *
 * Every caller while a read is in flight shares it (also a `fresh()` caller: the read started at most one
 * catalogue round trip earlier). A read of which a part failed is not kept: the next caller reads again, since
 * the upstream may have been down. `read` never rejects.
 */
export function catalogueFactsOf(read: () => Promise<{ facts: CatalogueFacts; failed: boolean }>, maxAgeMs: number) {
  let kept: { facts: Promise<CatalogueFacts>; readAt: number; settled: boolean } | undefined
  const readNow = (): Promise<CatalogueFacts> => {
    const reading = read()
    const entry = { facts: reading.then((r) => r.facts), readAt: performance.now(), settled: false }
    kept = entry
    void reading.then(({ failed }) => {
      entry.settled = true
      if (kept === entry && failed) kept = undefined
    })
    return entry.facts
  }
  return {
    fresh(): Promise<CatalogueFacts> {
      return kept !== undefined && !kept.settled ? kept.facts : readNow()
    },
    recent(): Promise<CatalogueFacts> {
      return kept !== undefined && (!kept.settled || performance.now() - kept.readAt < maxAgeMs) ? kept.facts : readNow()
    },
  }
}

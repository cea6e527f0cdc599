import assert from 'node:assert/strict'
import fc from 'fast-check'
import { decide, type Envelope, type Filter } from '../../src/contract/index.js'
import type { WalkedRecord } from '../../src/inventory/index.js'
import { idOf, keysOf, type ModelCollection } from '../support/model-connector.js'

/**
 * What the inventory properties share, whichever upstream they walk (the in-memory model, or the real sql and
 * http connectors over a database or a loopback server): filters, budgets, and writes between pages, applied
 * to a ModelCollection that keeps every version so the properties can say what a walk had to return.
 */

export const FILTERS: readonly Filter[] = [{}, { status: 'past_due' }, { n: { gte: 10 } }]

/** Budgets smaller than the collections (the walk must stop and say so), and budgets that let it finish. */
export const budgetArb = fc.oneof(
  fc.record({ maxPages: fc.integer({ min: 1, max: 15 }), maxItems: fc.integer({ min: 1, max: 40 }) }),
  fc.record({ maxPages: fc.integer({ min: 50, max: 1000 }), maxItems: fc.integer({ min: 100, max: 1000 }) }),
)

export interface Mutation {
  readonly atRead: number
  readonly op: 'insert' | 'delete' | 'update'
  readonly source: number
  readonly pick: number
}

export const mutationsArb = fc.array(
  fc.record({
    atRead: fc.integer({ min: 0, max: 60 }),
    op: fc.constantFrom('insert' as const, 'delete' as const, 'update' as const),
    source: fc.nat(),
    pick: fc.nat(),
  }),
  { maxLength: 12 },
)

export function fieldsOf(_source: string, i: number): Record<string, unknown> {
  return { n: i, status: i % 3 === 0 ? 'past_due' : 'active' }
}

/** One write made between pages, as the upstream must replay it. `version` is the record's after the write. */
export type Write =
  | { readonly op: 'insert' | 'update'; readonly source: string; readonly id: string; readonly fields: Readonly<Record<string, unknown>>; readonly version: number }
  | { readonly op: 'delete'; readonly source: string; readonly id: string }

/**
 * Applies the mutations scheduled for read number `readIndex` to the collection and returns the writes made
 * (inserted ids count up from 100,000 per scheduler), for an upstream outside the collection to replay.
 */
export function mutationScheduler(collection: ModelCollection, mutations: readonly Mutation[]): (readIndex: number) => Write[] {
  let fresh = 100_000
  return (readIndex) => {
    const writes: Write[] = []
    for (const m of mutations) {
      if (m.atRead !== readIndex) continue
      const source = collection.sources[m.source % collection.sources.length]!
      const rows = collection.rows(source)
      if (m.op === 'insert') {
        const id = idOf(fresh++)
        collection.insert(source, id, fieldsOf(source, m.pick))
        writes.push({ op: 'insert', source, id, fields: collection.get(source, id)!.fields, version: collection.get(source, id)!.version })
      } else if (rows.length > 0) {
        const row = rows[m.pick % rows.length]!
        if (m.op === 'delete') {
          collection.remove(source, row.id)
          writes.push({ op: 'delete', source, id: row.id })
        } else {
          collection.update(source, row.id, { n: m.pick % 40, status: m.pick % 2 === 0 ? 'past_due' : 'active' })
          const now = collection.get(source, row.id)!
          writes.push({ op: 'update', source, id: row.id, fields: now.fields, version: now.version })
        }
      }
    }
    return writes
  }
}

export function assertNoDuplicates(keys: readonly string[]): void {
  assert.equal(new Set(keys).size, keys.length, `an item came back twice: ${keys.filter((k, i) => keys.indexOf(k) !== i).join(', ')}`)
}

/**
 * The article's invariant for one walk over `collection`: never an item twice; every item (at the version
 * returned) was there, matching, in the snapshot (snapshot reads) or at some moment of the walk (live reads);
 * `complete: true` only when every item of the snapshot (or every one present throughout a live walk over stable
 * or proven positions) was returned, and a complete live walk that missed one says `unproven` and proves no
 * absence; an incomplete walk says why. `openedAt`/`closedAt` are the collection's transactions when the walk's
 * session opened and closed; `versionText` is how the upstream writes a version number.
 */
export function assertAccountedFor(
  result: Envelope<WalkedRecord>,
  collection: ModelCollection,
  walk: {
    readonly snapshot: boolean
    readonly openedAt: number
    readonly closedAt: number
    readonly filter: Filter
    /** The upstream's positions survive writes by construction (an id-keyed cursor): a complete live walk missed nothing. */
    readonly stablePositions?: boolean
  },
  versionText: (version: number) => string,
): void {
  const keys = keysOf(result.items)
  assertNoDuplicates(keys)
  if (walk.snapshot) {
    const snapshot = collection.keys(walk.openedAt, walk.filter)
    for (const k of keys) assert.ok(snapshot.has(k), `${k} is not in the snapshot`)
    for (const item of result.items) assert.equal(item.version, versionText(collection.get(item.source, item.id, walk.openedAt)!.version))
    if (result.complete) assert.deepEqual(new Set(keys), snapshot)
    assert.equal(result.scope.consistent_snapshot, true)
  } else {
    assert.equal(result.scope.consistent_snapshot, false)
    const seen = collection.versionsSeen(walk.openedAt, walk.closedAt, walk.filter, versionText)
    for (const item of result.items) assert.ok(seen.has(`${item.source}/${item.id}@${item.version}`), `${item.id}@${item.version} never existed`)
    if (result.complete) {
      const returned = new Set(keys)
      const missed = [...collection.keysPresentThroughout(walk.openedAt, walk.closedAt, walk.filter)].filter((k) => !returned.has(k))
      // A walk whose positions were stable (the upstream's own, or proven by the walk) misses nothing. One that
      // could not prove it may have, and then it must not let anyone take its "complete" for absence.
      if (walk.stablePositions || result.scope.stability === 'proven') assert.deepEqual(missed, [], `${missed.join(', ')} present for the whole walk but not returned`)
      else if (missed.length > 0) {
        assert.equal(result.scope.stability, 'unproven')
        assert.equal(decide(result, 'prove_absence').decision, 'refuse_or_request_review', `${missed.join(', ')} missed, yet absence was proven`)
      }
    }
  }
  if (result.complete) assert.equal(result.continuation, null)
  else assert.ok(result.incomplete_reasons.length > 0)
}

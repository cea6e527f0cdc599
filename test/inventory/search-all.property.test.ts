import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { decide } from '../../src/contract/index.js'
import {
  createModelConnector,
  keysOf,
  seedCollection,
  type ModelCollection,
  type ReadContext,
  type ReadFault,
} from '../support/model-connector.js'
import { cursorOf, followToEnd, waitingClock, walker } from './helpers.js'
import { FILTERS, type Mutation, assertAccountedFor, assertNoDuplicates, budgetArb, fieldsOf, mutationScheduler, mutationsArb } from './walk-arbitraries.js'

/**
 * The invariant of the article, checked on a model upstream: a walk may say `complete: true` only after it
 * accounted for every item of the snapshot it declares, whatever the sizes, budgets, short pages, mutations
 * between pages and upstream faults.
 */

const NUM_RUNS = Number(process.env.WARRANT_PROPERTY_RUNS ?? 150)

const shapeArb = fc.record({
  counts: fc.array(fc.integer({ min: 0, max: 60 }), { minLength: 1, maxLength: 4 }),
  ordering: fc.constantFrom('id' as const, 'updated' as const),
  pageSize: fc.integer({ min: 1, max: 20 }),
  pageCap: fc.option(fc.integer({ min: 1, max: 15 }), { nil: undefined }),
  // The upstream may serve fewer items than asked, even zero, while `next` is not null; some read makes progress.
  shortPages: fc.option(
    fc.array(fc.integer({ min: 0, max: 10 }), { minLength: 1, maxLength: 6 }).map((a) => [...a, 1 + (a.length % 5)]),
    { nil: undefined },
  ),
  lazyEnd: fc.boolean(),
  filter: fc.constantFrom(...FILTERS),
})

const faultArb: fc.Arbitrary<ReadFault> = fc.oneof(
  fc.record({ kind: fc.constant('rate_limited' as const), retryAfterSeconds: fc.integer({ min: 0, max: 120 }) }),
  fc.record({ kind: fc.constant('unavailable' as const), status: fc.constantFrom(500, 502, 503) }),
  fc.constant<ReadFault>({ kind: 'cursor_expired' }),
  fc.record({
    kind: fc.constant('incomplete' as const),
    code: fc.constantFrom('RESULT_LIMIT_REACHED' as const, 'TIME_BUDGET_EXCEEDED' as const),
    stop: fc.boolean(),
  }),
)
const faultsArb = fc.array(fc.tuple(fc.integer({ min: 0, max: 30 }), faultArb), { maxLength: 4 })

type Shape = typeof shapeArb extends fc.Arbitrary<infer T> ? T : never

function sourcesOf(shape: Shape): string[] {
  return shape.counts.map((_, i) => `s${i}`)
}

/** Applies the mutations scheduled for this read, between pages. */
function mutator(collection: ModelCollection, mutations: readonly Mutation[]): (ctx: ReadContext) => void {
  const schedule = mutationScheduler(collection, mutations)
  return (ctx) => void schedule(ctx.readIndex)
}

describe('searchAll properties', () => {
  it('(a, b) complete only when every item of the declared snapshot is accounted for; never an item twice', async () => {
    await fc.assert(
      fc.asyncProperty(shapeArb, budgetArb, mutationsArb, fc.boolean(), fc.constantFrom('walk' as const, 'walk' as const, 'page' as const), async (shape, budget, mutations, snapshots, mode) => {
        const collection = seedCollection(sourcesOf(shape), shape.counts, fieldsOf)
        const connector = createModelConnector({
          collection,
          snapshots,
          ordering: shape.ordering,
          ...(shape.pageCap === undefined ? {} : { pageCap: shape.pageCap }),
          ...(shape.shortPages === undefined ? {} : { shortPages: shape.shortPages }),
          lazyEnd: shape.lazyEnd,
          onRead: mutator(collection, mutations),
        })
        const result = await walker(connector)({ pageSize: shape.pageSize, filter: shape.filter }, budget, { mode })
        const session = connector.sessions[0]!
        assertAccountedFor(result, collection, { snapshot: snapshots, openedAt: session.openedAt, closedAt: session.closedAt!, filter: shape.filter, stablePositions: true }, (v) => `v${v}`)
      }),
      { numRuns: NUM_RUNS },
    )
  })

  it('(b) live reads under an update-ordered upstream: records moved between pages come back once, and the walk says the data moved', async () => {
    let moved = 0
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 5, max: 40 }), { minLength: 1, maxLength: 3 }),
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 30 }), fc.nat()), { minLength: 1, maxLength: 15 }),
        async (counts, pageSize, updates) => {
          const collection = seedCollection(counts.map((_, i) => `s${i}`), counts, fieldsOf)
          const connector = createModelConnector({
            collection,
            snapshots: false,
            ordering: 'updated',
            onRead: (ctx) => {
              for (const [at, pick] of updates) {
                if (at !== ctx.readIndex) continue
                // Touch a record of the source being read: those already read move behind the walk's position.
                const rows = collection.rows(ctx.source)
                if (rows.length > 0) collection.update(ctx.source, rows[pick % rows.length]!.id, { touched: pick })
              }
            },
          })
          const result = await walker(connector)({ pageSize }, { maxPages: 10_000, maxItems: 10_000 })
          const keys = keysOf(result.items)
          assertNoDuplicates(keys)
          const dropped = result.warnings.filter((w) => w.code === 'ORDER_FALLBACK')
          for (const w of dropped)
            assert.ok(result.incomplete_reasons.some((r) => r.code === 'SNAPSHOT_INVALIDATED' && r.source === w.source))
          const session = connector.sessions[0]!
          const returned = new Set(keys)
          for (const k of collection.keysPresentThroughout(session.openedAt, session.closedAt!)) assert.ok(returned.has(k))
          if (dropped.length > 0) moved += 1
        },
      ),
      { numRuns: NUM_RUNS },
    )
    assert.ok(moved > 0, 'the generator produced records that moved under the walk')
  })

  it('(c) following the continuations of a snapshot walk without mutations yields exactly the snapshot set', async () => {
    await fc.assert(
      fc.asyncProperty(shapeArb, budgetArb, fc.constantFrom('walk' as const, 'page' as const), async (shape, budget, mode) => {
        const collection = seedCollection(sourcesOf(shape), shape.counts, fieldsOf)
        const connector = createModelConnector({
          collection,
          snapshots: true,
          ordering: shape.ordering,
          ...(shape.pageCap === undefined ? {} : { pageCap: shape.pageCap }),
          ...(shape.shortPages === undefined ? {} : { shortPages: shape.shortPages }),
          lazyEnd: shape.lazyEnd,
        })
        const all = await followToEnd(walker(connector), { pageSize: shape.pageSize, filter: shape.filter }, budget, { mode }, 5_000)
        assert.equal(all.last.complete, true)
        const keys = keysOf(all.items)
        assertNoDuplicates(keys)
        assert.deepEqual(new Set(keys), collection.keys(collection.tx, shape.filter))
        for (const part of all.parts) {
          assert.equal(part.scope.consistent_snapshot, true, 'no write between parts: the same snapshot')
          if (!part.complete) assert.ok(['CLIENT_LIMIT_REACHED', 'MORE_PAGES_AVAILABLE'].includes(part.incomplete_reasons[0]!.code))
        }
        assert.equal(connector.sessions.length, all.parts.length)
        assert.ok(connector.sessions.every((s) => s.closedAt !== null), 'every session closed')
      }),
      { numRuns: NUM_RUNS },
    )
  })

  it('(c, with faults) a followed walk that ends complete has exactly the snapshot set; the loop always ends', async () => {
    await fc.assert(
      fc.asyncProperty(shapeArb, budgetArb, faultsArb, async (shape, budget, faults) => {
        const collection = seedCollection(sourcesOf(shape), shape.counts, fieldsOf)
        const schedule = new Map(faults)
        const connector = createModelConnector({
          collection,
          snapshots: true,
          ordering: shape.ordering,
          ...(shape.pageCap === undefined ? {} : { pageCap: shape.pageCap }),
          ...(shape.shortPages === undefined ? {} : { shortPages: shape.shortPages }),
          lazyEnd: shape.lazyEnd,
          onRead: (ctx) => schedule.get(ctx.readIndex),
        })
        const all = await followToEnd(walker(connector), { pageSize: shape.pageSize, filter: shape.filter }, budget, {}, 5_000)
        const keys = keysOf(all.items)
        assertNoDuplicates(keys)
        const expected = collection.keys(collection.tx, shape.filter)
        for (const k of keys) assert.ok(expected.has(k))
        if (all.last.complete) assert.deepEqual(new Set(keys), expected)
        // A fault that hit a read and lost part of a source (expired cursor, upstream cut) is reported to the end.
        const lost = [...schedule].some(([at, f]) => at < connector.reads.length && (f.kind === 'cursor_expired' || f.kind === 'incomplete'))
        if (lost) assert.equal(all.last.complete, false, 'a walk that lost a part never ends complete')
      }),
      { numRuns: NUM_RUNS },
    )
  })

  it('(d) an empty complete:false result never yields proceed for prove_absence or change_from_absence', async () => {
    await fc.assert(
      fc.asyncProperty(
        shapeArb,
        budgetArb,
        faultsArb,
        mutationsArb,
        fc.boolean(),
        fc.boolean(),
        fc.constantFrom('walk' as const, 'page' as const),
        async (shape, budget, faults, mutations, snapshots, restricted, mode) => {
          const collection = seedCollection(sourcesOf(shape), shape.counts, fieldsOf)
          const schedule = new Map(faults)
          const mutate = mutator(collection, mutations)
          const connector = createModelConnector({
            collection,
            snapshots,
            ordering: shape.ordering,
            ...(shape.pageCap === undefined ? {} : { pageCap: shape.pageCap }),
            ...(shape.shortPages === undefined ? {} : { shortPages: shape.shortPages }),
            lazyEnd: shape.lazyEnd,
            onRead: (ctx) => {
              mutate(ctx)
              return schedule.get(ctx.readIndex)
            },
          })
          const walk = walker(connector)
          const clock = waitingClock()
          let cursor: string | null = null
          for (let call = 0; call < 200; call++) {
            const result = await walk(
              { pageSize: shape.pageSize, filter: shape.filter, cursor },
              budget,
              { mode, clock, scope: { resource: 'subscriptions', environment: 'model (test)', visibility: 'records of team blue', restricted } },
            )
            clock.waitFor(result)
            if (!result.complete) {
              assert.notEqual(decide(result, 'change_from_absence').decision, 'proceed')
              if (result.items.length === 0) assert.notEqual(decide(result, 'prove_absence').decision, 'proceed')
            }
            if (restricted) assert.equal(result.complete, false)
            cursor = cursorOf(result)
            if (cursor === null) break
          }
        },
      ),
      { numRuns: NUM_RUNS },
    )
  })
})

import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import fc from 'fast-check'
import { DEFAULT_MAX_RATE_LIMIT_RETRIES, type OperationView, type TargetResult } from '../../src/operations/index.js'
import { STORE_KINDS } from '../support/stores.js'
import { AGENT, createHarness } from './support/harness.js'
import type { WriteBehaviour } from './support/model-upstream.js'

/** What the model upstream does for one target: some 429s, then one final behaviour (or a record changed before the run). */
type Final = Exclude<WriteBehaviour, 'rate_limited'> | 'stale'
interface Script {
  readonly rateLimits: number
  readonly final: Final
}

const scriptArb: fc.Arbitrary<Script> = fc.record({
  rateLimits: fc.oneof({ weight: 6, arbitrary: fc.constant(0) }, { weight: 2, arbitrary: fc.integer({ min: 1, max: 2 }) }, { weight: 1, arbitrary: fc.constant(DEFAULT_MAX_RATE_LIMIT_RETRIES + 1) }),
  final: fc.oneof(
    { weight: 10, arbitrary: fc.constant<Final>('success') },
    { weight: 2, arbitrary: fc.constantFrom<Final>('conflict', 'refused', 'stale', 'rejected', 'unknown', 'unknown_applied', 'empty', 'throws_refused') },
    { weight: 1, arbitrary: fc.constantFrom<Final>('contradict', 'empty_contradict', 'unauthorized') },
  ),
})

const caseArb = fc.record({
  scripts: fc.array(scriptArb, { minLength: 1, maxLength: 24 }),
  consecutive: fc.integer({ min: 1, max: 6 }),
  validation: fc.integer({ min: 1, max: 6 }),
  concurrency: fc.integer({ min: 1, max: 4 }),
  batchSize: fc.integer({ min: 1, max: 9 }),
})

type Expected = { states: string[]; halt: { rule: string; ord: number } | null }

/** The reference: what a sequential executor under these stop rules must record. */
function reference(scripts: readonly Script[], consecutive: number, validation: number): Expected {
  const states = scripts.map(() => 'pending')
  let streak = 0
  let rejected = 0
  for (let ord = 0; ord < scripts.length; ord++) {
    const { rateLimits, final } = scripts[ord]!
    // a stale record is skipped at its re-read: no write is sent, so no 429 can come back
    // its write was sent and answered 429, never retried once halted: unknown, for reconcile to settle
    if (final !== 'stale' && rateLimits > DEFAULT_MAX_RATE_LIMIT_RETRIES) return { states: states.map((s, i) => (i === ord ? 'unknown' : s)), halt: { rule: 'rate_limit_retries', ord } }
    const state = ({ success: 'succeeded', empty: 'succeeded', conflict: 'skipped', refused: 'failed', stale: 'skipped', rejected: 'failed', unknown: 'unknown', unknown_applied: 'unknown', contradict: 'failed', empty_contradict: 'failed', unauthorized: 'failed', throws_refused: 'failed' } as const)[final]
    states[ord] = state
    if (state === 'failed' || state === 'unknown') streak += 1
    else streak = 0
    // a 412 with the record as read is the upstream's refusal of the write itself (conflict-verdict.ts)
    const refusal = final === 'rejected' || final === 'refused'
    if (refusal) rejected += 1
    if (final === 'contradict' || final === 'empty_contradict') return { states, halt: { rule: 'effect_contradicted', ord } }
    if (final === 'unauthorized') return { states, halt: { rule: 'authorization_failure', ord } }
    if (refusal && rejected >= validation) return { states, halt: { rule: 'validation_failures', ord } }
    if (streak >= consecutive) return { states, halt: { rule: 'consecutive_errors', ord } }
  }
  return { states, halt: null }
}

for (const kind of STORE_KINDS) {
  // windowed: the connector writes a window as one call (as the sql connector on SQLite and PostgreSQL does)
  for (const windowed of [false, true])
  describe(`executor against a model upstream, random outcomes and stop rules (${kind} store${windowed ? ', window writes' : ''})`, () => {
    test('one final state per target, halts leave later targets pending, nothing written twice, counts equal the ledger', async () => {
      await fc.assert(
        fc.asyncProperty(caseArb, async ({ scripts, consecutive, validation, concurrency, batchSize }) => {
          const h = await createHarness(kind, {
            count: scripts.length,
            execution: { concurrency, batch_size: batchSize, halt_after_consecutive_errors: consecutive, halt_after_validation_failures: validation },
            windowed,
          })
          try {
            scripts.forEach((s, ord) => {
              if (s.final === 'stale') h.upstream.update(h.ids[ord]!, { role: 'owner' })
            })
            const script = new Map(h.ids.map((id, ord) => [id, scripts[ord]!]))
            h.upstream.behaviour = (id, call) => {
              const s = script.get(id)!
              if (call <= s.rateLimits) return 'rate_limited'
              return s.final === 'stale' ? 'success' : s.final
            }
            const receipt = await h.operations.commitPlan(AGENT, h.plan.plan_id, { expectedDigest: h.plan.plan_digest, idempotencyKey: 'prop' })
            const view = await h.operations.waitFor(receipt.operation_id, 20_000)
            const results = (await h.operations.results(AGENT, receipt.operation_id, { limit: 1000 })).results
            check(view, results, scripts, h.upstream, { consecutive, validation, concurrency })
            // no window carries more than `concurrency` targets; without window writes none is sent
            if (windowed) assert.ok(h.upstream.windows.every((w) => w.length >= 2 && w.length <= concurrency), JSON.stringify(h.upstream.windows))
            else assert.deepEqual(h.upstream.windows, [])
          } finally {
            await h.close()
          }
        }),
        { numRuns: kind === 'postgres' ? 25 : 60 },
      )
    })
  })
}

function check(
  view: OperationView,
  results: readonly TargetResult[],
  scripts: readonly Script[],
  upstream: { applied: Map<string, number>; calls: Map<string, number>; rows: Map<string, unknown> },
  rules: { consecutive: number; validation: number; concurrency: number },
): void {
  assert.ok(['succeeded', 'completed_with_skips', 'completed_with_unknown', 'partially_failed', 'failed', 'halted'].includes(view.state), `finished, not ${view.state}`)
  // every target ends in exactly one state, and the counts are the ledger's
  assert.equal(results.length, scripts.length)
  assert.deepEqual(results.map((r) => r.ord), scripts.map((_, i) => i))
  const tally = { pending: 0, in_flight: 0, succeeded: 0, failed: 0, skipped: 0, unknown: 0 }
  for (const r of results) tally[r.outcome] += 1
  assert.deepEqual(view.counts, tally)
  assert.equal(tally.in_flight, 0)
  // nothing written twice: at most one applied write per id, at most one non-429 write call per id
  for (const [id, n] of upstream.applied) assert.ok(n <= 1, `${id} applied ${n} times`)
  results.forEach((r, ord) => {
    const calls = upstream.calls.get(r.id) ?? 0
    assert.ok(calls - Math.min(scripts[ord]!.rateLimits, calls) <= 1, `${r.id} answered more than once`)
    if (r.outcome === 'pending' || (r.outcome === 'skipped' && scripts[ord]!.final === 'stale')) assert.equal(upstream.applied.get(r.id) ?? 0, 0, `${r.id} written though ${r.outcome}`)
  })
  // halting: a recorded rule on a target; without concurrency, exactly the reference's outcome
  if (view.state === 'halted') {
    assert.ok(view.halt_reason && view.halt_reason.ord !== null)
    assert.equal(results[view.halt_reason.ord]!.id, view.halt_reason.target_id)
  } else {
    assert.equal(view.halt_reason, null)
    assert.equal(tally.pending, 0)
    const named = tally.succeeded === scripts.length ? 'succeeded' : tally.failed > 0 ? (tally.succeeded > 0 ? 'partially_failed' : 'failed') : tally.unknown > 0 ? 'completed_with_unknown' : 'completed_with_skips'
    assert.equal(view.state, named)
  }
  if (rules.concurrency === 1) {
    const expected = reference(scripts, rules.consecutive, rules.validation)
    assert.deepEqual(results.map((r) => r.outcome), expected.states)
    assert.deepEqual(view.halt_reason ? { rule: view.halt_reason.rule, ord: view.halt_reason.ord } : null, expected.halt)
    if (expected.halt) assert.ok(results.slice(expected.halt.ord + 1).every((r) => r.outcome === 'pending'), 'later targets stay pending')
  }
}

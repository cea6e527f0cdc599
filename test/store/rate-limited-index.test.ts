import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { CompiledQuery } from 'kysely'
import { rateLimitTotalsQuery } from '../../src/operations/ledger.js'
import { STORE_KINDS, createTestStore } from '../support/stores.js'

// Every view of an operation (API, MCP, CLI, the page's 2-second poll) sums the upstream's 429s over its targets;
// by the primary key that read every target row of the operation (~30 ms for 200,000 on SQLite, the event loop
// held each time). Migration 0016's partial index holds only the throttled targets.
for (const kind of STORE_KINDS) {
  describe(`an operation's rate-limit totals read only throttled targets (${kind} store)`, () => {
    test('the statement every view runs is answered from the partial index, never a walk of every target', async () => {
      const { store, drop } = await createTestStore(kind)
      try {
        const compiled = rateLimitTotalsQuery(store.db, 'op_bench').compile()
        const explain = kind === 'sqlite' ? 'explain query plan ' : 'explain '
        const plan = await store.db.executeQuery<Record<string, string>>(CompiledQuery.raw(explain + compiled.sql, [...compiled.parameters]))
        const text = plan.rows.map((row) => row.detail ?? row['QUERY PLAN']).join(' | ')
        assert.match(text, /operation_targets_rate_limited_idx/, text)
      } finally {
        await drop()
      }
    })
  })
}

import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { STORE_KINDS } from '../support/stores.js'
import { runAcrossRestart } from './support/restart-trial.js'

const THRESHOLD = 5
const BEFORE_STOP = 3

// halt_after_consecutive_errors counts targets in a row that ended failed or unknown. An executor that stops
// mid-operation (a deploy's SIGTERM, a lease taken over) and is resumed by another started its streak at 0: the
// validation failures recorded so far were counted again (countValidationFailures), the streak was not. With a
// threshold of 5, an upstream resetting every write got 3 writes before the stop and 5 more after it: 8 writes in
// a row without an answer, where the operator configured the operation to halt after 5.
for (const kind of STORE_KINDS) {
  describe(`the consecutive-error streak across an executor restart (${kind} store)`, () => {
    test(`an operation resumed after ${BEFORE_STOP} errors in a row halts after ${THRESHOLD - BEFORE_STOP} more`, { timeout: 120_000 }, async () => {
      // every write is received whole, then its connection reset: no answer, each target `unknown`
      const execution = { concurrency: 1, halt_after_consecutive_errors: THRESHOLD }
      await runAcrossRestart(kind, { count: 20, execution, stopAt: BEFORE_STOP, answer: () => ({ reset: true }) }, ({ row, upstream }) => {
        assert.equal(row.state, 'halted', JSON.stringify(row))
        assert.equal(JSON.parse(row.halt_reason!).rule, 'consecutive_errors')
        assert.equal(upstream.totalWrites(), THRESHOLD, `writes without an answer in a row: ${upstream.totalWrites()}, the threshold ${THRESHOLD}`)
        assert.match(JSON.parse(row.halt_reason!).message, new RegExp(`^${THRESHOLD} targets in a row`))
      })
    })
  })
}

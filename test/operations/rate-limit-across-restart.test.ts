import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { DEFAULT_MAX_RATE_LIMIT_RETRIES } from '../../src/operations/index.js'
import { STORE_KINDS } from '../support/stores.js'
import { runAcrossRestart } from './support/restart-trial.js'

const BEFORE_STOP = 4

// max_rate_limit_retries counts the 429s one target got. The count lived in the executor's memory alone: an
// executor stopped mid-operation (a deploy, a lease taken over) and resumed by another started it at 0, so an
// upstream answering 429 forever got 4 before the stop and 11 after it, and with a restart now and then the
// operation never halted. The count is kept on the target's ledger row and read back when the operation resumes.
for (const kind of STORE_KINDS) {
  describe(`the rate-limit retry count across an executor restart (${kind} store)`, () => {
    test(`a target rate limited ${BEFORE_STOP} times before a restart halts the operation at its ${DEFAULT_MAX_RATE_LIMIT_RETRIES + 1}th 429 in all`, { timeout: 120_000 }, async () => {
      // every write is answered 429 with no wait to speak of: the first target is never written
      const answer = () => ({ refuse: { status: 429, body: { error: 'slow down' }, headers: { 'retry-after': '0' } } })
      await runAcrossRestart(kind, { count: 3, execution: { concurrency: 1 }, stopAt: BEFORE_STOP, answer }, ({ row, upstream }) => {
        assert.equal(row.state, 'halted', JSON.stringify(row))
        const halt = JSON.parse(row.halt_reason!)
        assert.equal(halt.rule, 'rate_limit_retries')
        assert.equal(upstream.totalWrites(), DEFAULT_MAX_RATE_LIMIT_RETRIES + 1, `429s answered in all: ${upstream.totalWrites()}, the limit ${DEFAULT_MAX_RATE_LIMIT_RETRIES} retries`)
        assert.match(halt.message, new RegExp(`^rate limited ${DEFAULT_MAX_RATE_LIMIT_RETRIES + 1} times`))
      })
    })
  })
}

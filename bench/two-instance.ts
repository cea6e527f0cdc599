/**
 * The full two-instance trial (issue #9, goal 6), not run in CI: `node --import tsx bench/two-instance.ts [targets]`.
 * Two `warrant serve` processes on one PostgreSQL store (WARRANT_TEST_POSTGRES_URL, a database created and
 * dropped here) against a loopback HTTP upstream counting PATCHes per record; the one running the operation is
 * killed with SIGKILL, the other finishes it; then a killed and restarted instance resumes its own. The trial
 * asserts nothing was written twice and the ledger agrees with the upstream (see
 * test/operations/support/two-instance-trial.ts, which the suite runs at 300 targets); this prints what it measured.
 */
import { runTwoInstanceTrial } from '../test/operations/support/two-instance-trial.js'

const targets = Number(process.argv[2] ?? 3000)
const options = { targets, leaseSeconds: 20, concurrency: 16, writeDelayMs: 5 }
const started = Date.now()
const report = await runTwoInstanceTrial(options)
console.log(JSON.stringify({ options, seconds: (Date.now() - started) / 1000, ...report }, null, 2))
for (const [name, phase] of Object.entries(report))
  console.log(
    `${name}: next write ${phase.takeover_ms} ms after the kill, ${(phase.lease_left_ms / 1000).toFixed(1)} s before the dead instance's lease would have expired; ` +
      `${phase.in_flight_at_kill} in flight at the kill (unknown, then reconciled); ledger succeeded ${phase.succeeded} = writes applied ${phase.writes_applied}; ` +
      `at most ${phase.max_writes_per_record} write per record`,
  )

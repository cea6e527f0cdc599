// Mutation testing of the safety guards (`npm run mutants`; not in CI: too slow for 2 cores). One group per
// guard area, chosen by WARRANT_MUTANT_GROUP: the guard lines it mutates and the tests that must kill them. The
// command runner runs those tests once per mutant, one mutant at a time. scripts/mutants.sh runs every group
// and writes bench/MUTANTS.md from the JSON reports.
const groups = {
  plans: {
    mutate: ['src/plans/committability.ts:46-47', 'src/plans/committability.ts:51-52', 'src/plans/committability.ts:55-59', 'src/plans/approval-policy.ts:69-78', 'src/plans/approval-decisions.ts:61-61'],
    tests: ['test/plans/commit-guards.test.ts'],
  },
  operations: {
    // target-step: a compensation target that no longer holds what was written (178-179), the precondition it
    // carries (188) and the precondition check every target passes before its write (191)
    mutate: ['src/operations/target-step.ts:178-179', 'src/operations/target-step.ts:188-188', 'src/operations/target-step.ts:191-191', 'src/operations/commit.ts:129-130'],
    tests: ['test/operations/compensation-guard.test.ts', 'test/operations/compensation-moved.test.ts', 'test/operations/precondition-http.test.ts', 'test/operations/executor.test.ts'],
    only: 'idempotency|compensation|precondition',
  },
  executor: {
    // the window claim: a target reaches a worker only once its in_flight is committed (249-252)
    mutate: ['src/operations/executor.ts:224-227'],
    tests: ['test/operations/executor.test.ts'],
    only: 'in flight|in_flight|closing mid-operation|no longer holds pending',
  },
  window: {
    // a window written as one statement: a record named twice goes alone (68-71), a statement that dies unanswered
    // leaves every target unknown (102-108), one refused as a whole is written target by target (110), a row no
    // target named leaves the unanswered unknown (134-140)
    mutate: ['src/connectors/sql/write-window.ts:68-71', 'src/connectors/sql/write-window.ts:102-108', 'src/connectors/sql/write-window.ts:110-110', 'src/connectors/sql/write-window.ts:134-140'],
    tests: ['test/connectors/sql/write-window.test.ts'],
  },
  batch: {
    // http get.batch: an id with a comma is not sent comma-encoded (40), a 429 answers rate limited unless a later
    // source has the id (48, 52), each answer's sample read alone must be the same JSON (76-83), only a 2xx JSON
    // list is read (105-112), and only a record asked for, named once and whole is used (120-131)
    mutate: ['src/connectors/http/read-batch.ts:40-40', 'src/connectors/http/read-batch.ts:48-48', 'src/connectors/http/read-batch.ts:52-52', 'src/connectors/http/read-batch.ts:76-83', 'src/connectors/http/read-batch.ts:105-112', 'src/connectors/http/read-batch.ts:120-131'],
    tests: ['test/connectors/http/read-batch.test.ts'],
  },
  mcp: {
    mutate: ['src/mcp/audit.ts:16-30', 'src/mcp/server.ts:116-116'],
    tests: ['test/mcp/audit.test.ts'],
  },
  auth: {
    mutate: ['src/api/failure-limit.ts:29-30', 'src/api/failure-limit.ts:35-37', 'src/api/failure-limit.ts:44-54', 'src/api/authenticate.ts:25-26', 'src/api/authenticate.ts:32-32', 'src/ui/routes/session.ts:72-72', 'src/ui/routes/session.ts:84-84'],
    tests: ['test/api/failure-limit.test.ts', 'test/api/authenticate.test.ts', 'test/ui/sign-in-limit.test.ts'],
  },
  pacer: {
    mutate: ['src/operations/pacer.ts:41-41', 'src/operations/pacer.ts:45-59'],
    tests: ['test/operations/pacer.test.ts', 'test/operations/executor.test.ts'],
    only: 'pacer|max writes per second',
  },
}

const name = process.env.WARRANT_MUTANT_GROUP ?? 'plans'
const group = groups[name]
if (!group) throw new Error(`WARRANT_MUTANT_GROUP must be one of ${Object.keys(groups).join(', ')}`)
const only = group.only ? `--test-name-pattern='${group.only}' ` : ''

export default {
  testRunner: 'command',
  commandRunner: { command: `node --import tsx --test --test-concurrency=1 ${only}${group.tests.join(' ')}` },
  mutate: group.mutate,
  concurrency: 1,
  timeoutMS: 180_000,
  dryRunTimeoutMinutes: 10,
  reporters: ['clear-text', 'progress', 'json'],
  jsonReporter: { fileName: `reports/mutation/${name}.json` },
  ignorePatterns: ['.warrant', 'dist', 'reports', 'test-artifacts', '.stryker-tmp'],
  tempDirName: `.stryker-tmp/${name}`,
  cleanTempDir: true,
}

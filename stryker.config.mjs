// Mutation testing of the safety guards (`npm run mutants`; not in CI: too slow for 2 cores). One group per
// guard area, chosen by WARRANT_MUTANT_GROUP: the guard lines it mutates and the tests that must kill them. The
// command runner runs those tests once per mutant, one mutant at a time. scripts/mutants.sh runs every group
// and writes bench/MUTANTS.md from the JSON reports.
const groups = {
  plans: {
    mutate: ['src/plans/committability.ts:47-63', 'src/plans/approval-policy.ts:68-79', 'src/plans/approval-decisions.ts:56-63'],
    tests: ['test/plans/commit-guards.test.ts'],
  },
  operations: {
    mutate: ['src/operations/target-step.ts:80-80', 'src/operations/commit.ts:127-131'],
    tests: ['test/operations/compensation-guard.test.ts', 'test/operations/executor.test.ts'],
    only: 'idempotency|compensation',
  },
  pacer: {
    mutate: ['src/operations/pacer.ts:38-64'],
    tests: ['test/operations/pacer.test.ts', 'test/operations/executor.test.ts'],
    only: 'pacer|max writes per second',
  },
  mcp: {
    mutate: ['src/mcp/audit.ts:13-33', 'src/mcp/server.ts:69-69'],
    tests: ['test/mcp/audit.test.ts'],
  },
  auth: {
    mutate: ['src/api/authenticate.ts:24-43'],
    tests: ['test/api/authenticate.test.ts'],
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

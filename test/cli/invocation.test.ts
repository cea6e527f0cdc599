import assert from 'node:assert/strict'
import { test } from 'node:test'
import { invocation } from '../../src/cli/invocation.js'

/** The command a printed hint starts with is the one this process was started by (see `serve`'s token hints). */
test('the words that run Warrant again: npm script, npx, installed command, or node with the script', () => {
  const at = { cwd: '/home/ops/warrant', execArgv: [] as string[] }
  assert.equal(invocation({ ...at, env: { npm_lifecycle_event: 'start' }, argv: ['node', '/home/ops/warrant/src/cli/bin.ts'] }), 'npm run -s warrant --')
  assert.equal(invocation({ ...at, env: { npm_lifecycle_event: 'warrant' }, argv: ['node', '/home/ops/warrant/src/cli/bin.ts'] }), 'npm run -s warrant --')
  assert.equal(invocation({ ...at, env: { npm_lifecycle_event: 'npx' }, argv: ['node', '/srv/node_modules/.bin/warrant'] }), 'npx warrant')
  // `npm test` runs a serve in a test: not the npm script that would run it again
  assert.equal(invocation({ ...at, env: { npm_lifecycle_event: 'test' }, argv: ['node', '/home/ops/warrant/bin/warrant.js'] }), 'node bin/warrant.js')
  assert.equal(invocation({ ...at, env: {}, argv: ['node', '/usr/local/bin/warrant'] }), 'warrant', 'an installed command, by its link on the PATH')
  assert.equal(invocation({ ...at, env: {}, argv: ['node', '/opt/My Tools/warrant/bin/warrant.js'] }), "node '/opt/My Tools/warrant/bin/warrant.js'", 'outside the folder: the whole path, quoted')
  assert.equal(
    invocation({ cwd: '/w', env: {}, execArgv: ['--import', 'tsx', '--inspect=9229', '--cpu-prof'], argv: ['node', '/w/src/cli/bin.ts'] }),
    'node --import tsx src/cli/bin.ts',
    "the loader kept, a debugger's and a profiler's flags not",
  )
})

import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { isWarrantError } from '../../src/contract/index.js'
import { instanceOwner } from '../../src/store/index.js'
import { serverEnvWith, startUntilListening } from '../operations/support/serve-process.js'
import { createCliWorkspace } from '../support/cli-config.js'

/**
 * `WARRANT_INSTANCE_ID` names an instance; its lease owner is that name and this process's own part, so two processes
 * given one id are two owners. An id that is empty, blank, runaway or holds control characters was taken as it was (an
 * empty variable was an empty owner name shared by every such process); it is refused at start, naming the variable.
 */
describe('WARRANT_INSTANCE_ID', () => {
  test('a lease owner per process: the id, then this process', () => {
    const a = instanceOwner('web-1')
    const b = instanceOwner('web-1')
    assert.match(a, /^web-1@[^@]+:\d+:[0-9a-f]{8}/)
    assert.notEqual(a, b, 'one id, two owners')
    assert.doesNotMatch(instanceOwner(undefined), /@/)
  })

  for (const [value, why] of [
    ['', /is empty/],
    ['   ', /holds only white space/],
    ['x'.repeat(5000), /5000 characters long, more than 128/],
    ['web\n1', /U\+000A, a control or invisible character/],
    [' web-1', /begins or ends with white space/],
  ] as const) {
    test(`${JSON.stringify(value.slice(0, 10))}${value.length > 10 ? '…' : ''} is refused, naming the variable`, () => {
      assert.throws(
        () => instanceOwner(value),
        (error: unknown) => isWarrantError(error) && error.code === 'invalid_request' && /^WARRANT_INSTANCE_ID /.test(error.message) && why.test(error.message),
      )
    })
  }

  test('warrant serve with an empty, blank or runaway WARRANT_INSTANCE_ID refuses to start (exit 2) before it opens the store; with a name it starts', { timeout: 120_000 }, async () => {
    const ws = await createCliWorkspace({ count: 5 })
    try {
      const serveArgs = ['serve', '--config', ws.configPath, '--port', '0']
      for (const value of ['', '  ', 'y'.repeat(1000)]) {
        const refused = await startUntilListening(serveArgs, ws.dir, serverEnvWith({ WARRANT_INSTANCE_ID: value }))
        assert.equal(refused.listened, false, `serve started with WARRANT_INSTANCE_ID=${JSON.stringify(value)}`)
        assert.equal(refused.code, 2, refused.stderr)
        assert.match(refused.stderr, /WARRANT_INSTANCE_ID (is empty|holds only white space|is 1000 characters long)/)
        assert.equal(existsSync(join(ws.dir, 'warrant.db')), false, 'the store was not created')
      }
      const named = await startUntilListening(serveArgs, ws.dir, serverEnvWith({ WARRANT_INSTANCE_ID: 'web-1' }))
      assert.equal(named.listened, true, named.stderr)
    } finally {
      await ws.drop()
    }
  })
})

import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { promisify } from 'node:util'
import { createStore } from '../../src/store/index.js'
import { CLI_ENTRY, TSX_LOADER, createCliWorkspace } from '../support/cli-config.js'

const run = promisify(execFile)
const STALLED_WRITES = new URL('../support/stalled-write-preload.ts', import.meta.url).href

/**
 * A command whose promise never settles while nothing else is left in the event loop (a write never acknowledged)
 * made Node exit on its own, with status 0 and no output: a script read that as success. The CLI now says the
 * command ended without an answer and exits 1 (a bug: the internal-error status), with an audit row that says so.
 */
describe('a command that never settles (real process, sqlite)', () => {
  test('exits 1 saying it ended without an answer, never 0 in silence', { timeout: 120_000 }, async () => {
    const ws = await createCliWorkspace({ count: 5 })
    try {
      assert.equal((await ws.warrant(['search', 'subscriptions'])).code, 0)
      const out = join(ws.dir, 'export.ndjson')
      const env: NodeJS.ProcessEnv = { ...process.env, WARRANT_LOG_LEVEL: 'silent' }
      delete env.WARRANT_TOKEN
      let code = 0
      let stdout = ''
      let stderr = ''
      try {
        ;({ stdout, stderr } = await run(process.execPath, ['--import', TSX_LOADER, '--import', STALLED_WRITES, CLI_ENTRY, 'audit', 'export', '-o', out, '--config', ws.configPath], { cwd: ws.dir, env }))
      } catch (error) {
        const e = error as { code?: number; stdout?: string; stderr?: string }
        code = typeof e.code === 'number' ? e.code : -1
        stdout = e.stdout ?? ''
        stderr = e.stderr ?? ''
      }
      assert.equal(code, 1, `exit ${code}\nstdout: ${stdout}\nstderr: ${stderr}`)
      assert.equal(stdout, '')
      assert.match(stderr, /warrant: internal error: the command ended without an answer/)

      const store = await createStore({ url: `sqlite:${join(ws.dir, 'warrant.db')}` })
      try {
        const rows = await store.db.selectFrom('audit_events').select('summary').where('action', '=', 'cli:audit export').execute()
        assert.equal(rows.length, 1, 'the command has its audit row')
        const summary = JSON.parse(rows[0]!.summary) as { outcome: string; error?: string }
        assert.equal(summary.outcome, 'refused')
        assert.equal(summary.error, 'internal')
      } finally {
        await store.close()
      }
    } finally {
      await ws.drop()
    }
  })
})

import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { after, describe, it } from 'node:test'
import { createCliWorkspace, serveUntil } from '../support/cli-config.js'

const run = promisify(execFile)
const ROOT = join(import.meta.dirname, '..', '..')

/**
 * `warrant serve` (`npm start`) printed "metrics: …/metrics (admin token)" and never how to get one: its token
 * hints named `--role agent` and `--role reviewer` only, and none carried the config the server was started on,
 * so a token made as hinted could land in another store. The metrics line now says how to create an admin token,
 * and that command, run as printed from where `npm start` runs, gives a token `/metrics` answers 200 to. It is the
 * command the server was started by: `npm run -s warrant --` only under npm (outside the package's folder, as a person
 * who installed it runs `warrant`, that answered "Missing script").
 */
describe('warrant serve: the metrics hint says how to create an admin token', () => {
  // each case on a store of its own: the hint's `--name NAME` is one principal per store
  const workspaces: Awaited<ReturnType<typeof createCliWorkspace>>[] = []
  after(async () => {
    for (const ws of workspaces) await ws.drop()
  })

  /** Serves, runs the printed admin-token command from where the server runs, and reads /metrics with its token. */
  const hintedTokenReadsMetrics = async (env: NodeJS.ProcessEnv, command: RegExp) => {
    const ws = await createCliWorkspace({ count: 50 })
    workspaces.push(ws)
    const serve = await serveUntil(ws.configPath, ROOT, (out) => /^Try: /m.test(out), env)
    try {
      const printed = serve.printed
      const base = /health:\s+(http:\/\/\S+)\/health/.exec(printed)![1]!
      // the line under `metrics:` says how to create the admin token it asks for
      const hinted = /^ {2}metrics: .*\(admin token\).*\n\s+create an admin token: (.* token create .*)$/m.exec(printed)?.[1]
      assert.ok(hinted, `the metrics hint says how to create an admin token:\n${printed}`)
      assert.match(hinted, command, 'the command this server was started by')
      assert.match(hinted, /--role admin/)
      assert.match(hinted, /--config \S+/, 'the config the server runs on')

      const runEnv: NodeJS.ProcessEnv = { ...process.env, WARRANT_LOG_LEVEL: 'silent' }
      delete runEnv.WARRANT_CONFIG
      delete runEnv.WARRANT_TOKEN
      const { stdout } = await run('bash', ['-c', hinted], { cwd: ROOT, env: runEnv })
      // the token alone on stdout (`token create`'s own rule, so it can be redirected to a file)
      const token = stdout.trim()
      assert.match(token, /^\S+$/, stdout)
      const metrics = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${token}` } })
      assert.equal(metrics.status, 200, await metrics.text())
    } finally {
      await serve.stop()
    }
  }

  it('under npm start: an npm run -s warrant -- token create --role admin command with its config; run as printed, its token reads /metrics', { timeout: 180_000 }, async () => {
    await hintedTokenReadsMetrics({ npm_lifecycle_event: 'start' }, /^npm run -s warrant -- token create /)
  })

  it('started by node and a script (not npm): the hint is that node command, which runs where npm run would not', { timeout: 180_000 }, async () => {
    await hintedTokenReadsMetrics({ npm_lifecycle_event: '' }, /^node --import \S+ src\/cli\/bin\.ts token create /)
  })
})

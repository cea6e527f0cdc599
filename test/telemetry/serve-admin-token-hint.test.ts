import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { after, before, describe, it } from 'node:test'
import { createCliWorkspace, serveUntil } from '../support/cli-config.js'

const run = promisify(execFile)
const ROOT = join(import.meta.dirname, '..', '..')

/**
 * `warrant serve` (`npm start`) printed "metrics: …/metrics (admin token)" and never how to get one: its token
 * hints named `--role agent` and `--role reviewer` only, and none carried the config the server was started on,
 * so a token made as hinted could land in another store. The metrics line now says how to create an admin token,
 * and that command, run as printed from where `npm start` runs, gives a token `/metrics` answers 200 to.
 */
describe('warrant serve: the metrics hint says how to create an admin token', () => {
  let ws: Awaited<ReturnType<typeof createCliWorkspace>>
  before(async () => {
    ws = await createCliWorkspace({ count: 50 })
  })
  after(async () => {
    await ws?.drop()
  })

  it('prints a token create --role admin command with its config; run as printed, its token reads /metrics', { timeout: 180_000 }, async () => {
    const serve = await serveUntil(ws.configPath, ROOT, (out) => /^Try: /m.test(out))
    try {
      const printed = serve.printed
      const base = /health:\s+(http:\/\/\S+)\/health/.exec(printed)![1]!
      // the line under `metrics:` says how to create the admin token it asks for
      const command = /^ {2}metrics: .*\(admin token\).*\n\s+create an admin token: (npm run -s warrant -- token create .*)$/m.exec(printed)?.[1]
      assert.ok(command, `the metrics hint says how to create an admin token:\n${printed}`)
      assert.match(command, /--role admin/)
      assert.match(command, /--config \S+/, 'the config the server runs on')

      const env: NodeJS.ProcessEnv = { ...process.env, WARRANT_LOG_LEVEL: 'silent' }
      delete env.WARRANT_CONFIG
      delete env.WARRANT_TOKEN
      const { stdout } = await run('bash', ['-c', command], { cwd: ROOT, env })
      // the token alone on stdout (`token create`'s own rule, so it can be redirected to a file)
      const token = stdout.trim()
      assert.match(token, /^\S+$/, stdout)
      const metrics = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${token}` } })
      assert.equal(metrics.status, 200, await metrics.text())
    } finally {
      await serve.stop()
    }
  })
})

import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { createCliWorkspace, runWarrant } from '../support/cli-config.js'

// Every relative path a config names (the store, a sqlite URL, the audit key, an http credential's or a webhook's
// secret file) is read from the config file's folder, whatever the working directory: a sql connector's
// `password: {file}` too, or a config that works from its own folder fails from any other (an MCP client, a
// service manager, `--config /etc/warrant/warrant.yaml`).
describe('a sql connector password file is relative to the config file', () => {
  test('read from another working directory', { timeout: 120_000 }, async () => {
    const ws = await createCliWorkspace({
      count: 10,
      edit: (raw) => {
        // nothing listens there: the check cannot tell (exit 4), but only after the password file was read
        raw.resources.subscriptions.connector.url = 'postgres://postgres@127.0.0.1:9/warrant_absent'
        raw.resources.subscriptions.connector.password = { file: 'db-password' }
      },
    })
    try {
      writeFileSync(join(ws.dir, 'db-password'), 'not-used-under-trust\n')
      const out = await runWarrant(['check', 'subscriptions', '--config', ws.configPath], '/')
      assert.doesNotMatch(out.stderr, /secret file/, out.stderr)
      assert.equal(out.code, 4, out.stdout + out.stderr)
    } finally {
      await ws.drop()
    }
  })
})

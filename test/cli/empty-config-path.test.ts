import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { after, before, describe, test } from 'node:test'
import { DEMO_CONFIG_PATH } from '../../src/cli/config-path.js'
import { CLI_ENTRY, createCliWorkspace, TSX_LOADER } from '../support/cli-config.js'

const run = promisify(execFile)

/**
 * `--config "$CONFIG"` with CONFIG unset, or `WARRANT_CONFIG=` exported empty, ran the command on the bundled
 * demo (creating its 10,000-record database beside the package), never on the config the person meant, without a
 * word: a search answered COMPLETE over the wrong data. An empty `--config` is refused naming it; an empty
 * WARRANT_CONFIG is unset, so ./warrant.yaml or ./warrant.json in the working directory is used as documented.
 */
describe('an empty config path is never the bundled demo', () => {
  let ws: Awaited<ReturnType<typeof createCliWorkspace>>
  before(async () => {
    ws = await createCliWorkspace({ count: 200 })
  })
  after(async () => {
    await ws?.drop()
  })

  const warrant = async (args: readonly string[], env: NodeJS.ProcessEnv) => {
    try {
      const { stdout, stderr } = await run(process.execPath, ['--import', TSX_LOADER, CLI_ENTRY, ...args], { cwd: ws.dir, env: { ...process.env, WARRANT_LOG_LEVEL: 'silent', ...env } })
      return { code: 0, stdout, stderr }
    } catch (error) {
      const e = error as { code: number; stdout: string; stderr: string }
      return { code: e.code, stdout: e.stdout, stderr: e.stderr }
    }
  }

  test('--config "": exit 2 naming --config, no demo opened', async () => {
    const demoDb = join(DEMO_CONFIG_PATH, '../../.warrant/demo.db')
    const demoExisted = existsSync(demoDb)
    const r = await warrant(['search', 'subscriptions', '--config', ''], { WARRANT_CONFIG: '' })
    assert.equal(r.code, 2, r.stdout + r.stderr)
    assert.match(r.stderr, /invalid_request: --config is empty/)
    assert.doesNotMatch(r.stdout, /COMPLETE/)
    if (!demoExisted) assert.ok(!existsSync(demoDb), 'the bundled demo was not created')
  })

  test('WARRANT_CONFIG="": the ./warrant.json of the working directory, as when it is unset', async () => {
    const r = await warrant(['search', 'subscriptions', '-f', 'status=past_due', '--json'], { WARRANT_CONFIG: '' })
    assert.equal(r.code, 0, r.stderr)
    const envelope = JSON.parse(r.stdout)
    assert.ok(envelope.items.every((i: { id: string }) => i.id <= 'sub_00200'), 'the 200-record workspace, not the 10,000-record demo')
  })
})

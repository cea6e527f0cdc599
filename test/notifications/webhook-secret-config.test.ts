import assert from 'node:assert/strict'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { WarrantError } from '../../src/contract/index.js'
import { createNotifier } from '../../src/notifications/index.js'
import { createCliWorkspace, runWarrant } from '../support/cli-config.js'
import { createTempDir, createTestStore } from '../support/stores.js'

const silent = { warn: () => undefined, error: () => undefined }
const hook = (secret: { env: string } | { file: string }) => ({
  webhooks: [{ name: 'reviewers', url: 'http://127.0.0.1:1/hook', secret, format: 'json' as const }],
  retry: { max_attempts: 1, initial_backoff_ms: 10, max_backoff_ms: 10 },
  timeout_ms: 1000,
})

/**
 * A webhook whose secret cannot be read is a wrong configuration: the gateway refuses to start, naming the
 * webhook and where the secret was expected (exit 2, the operator's mistake), and never sends unsigned, or signed
 * with an empty key anyone could forge a signature with.
 */
describe('a webhook secret that is missing or empty refuses the start, clearly', () => {
  test('`warrant serve` with the secret env var unset: exit 2 naming the webhook and the variable, not "internal error"', async () => {
    const ws = await createCliWorkspace({
      count: 20,
      edit: (raw) => {
        raw.notifications = hook({ env: 'WARRANT_TEST_UNSET_WEBHOOK_SECRET' })
      },
    })
    try {
      const served = await runWarrant(['serve', '--port', '0'], ws.dir, { WARRANT_TEST_UNSET_WEBHOOK_SECRET: undefined })
      assert.equal(served.code, 2, served.stderr)
      assert.match(served.stderr, /notifications\.webhooks\[0\]\.secret: secret environment variable WARRANT_TEST_UNSET_WEBHOOK_SECRET is not set/)
      assert.doesNotMatch(served.stderr, /internal error|bug in Warrant/)
    } finally {
      await ws.drop()
    }
  })

  test('an empty secret file is refused like a missing one', async () => {
      const { store, drop } = await createTestStore('sqlite')
      const dir = await createTempDir('warrant-empty-secret-')
      try {
        const file = join(dir.path, 'webhook-secret')
        await writeFile(file, '\n')
        assert.throws(
          () => createNotifier({ config: hook({ file }), store, log: silent, baseUrl: 'http://w.example' }),
          (error: unknown) => error instanceof WarrantError && error.code === 'invalid_request' && /notifications\.webhooks\[0\]\.secret: secret file .* is empty/.test(error.message),
        )
      } finally {
        await dir.drop()
        await drop()
      }
  })
})

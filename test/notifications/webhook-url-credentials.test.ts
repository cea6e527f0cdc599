import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { parseConfig } from '../../src/config/index.js'
import { createCliWorkspace, runWarrant } from '../support/cli-config.js'
import { startReceiver } from '../ui/support.js'

// A webhook URL with credentials in it (`https://user:password@receiver/hook`, as a receiver behind basic auth is
// often written) cannot be sent: fetch refuses such a URL, and its message quotes it whole. Every delivery failed
// with the password in `last_error`, which the plan page shows every reviewer, in the `webhook.delivery` audit
// row and in the log. It is refused where the config is read, naming the key and never quoting the password.
const PASSWORD = 'hookpass-Q7v'

describe('a webhook URL holding credentials is refused at load', () => {
  test('the config is refused naming notifications.webhooks.0.url, without the password', () => {
    const raw = {
      store: 'sqlite::memory:',
      resources: {},
      notifications: { webhooks: [{ name: 'reviewers', url: `https://hooks:${PASSWORD}@receiver.example/hook`, secret: { env: 'HOOK_SECRET' } }] },
    }
    assert.throws(
      () => parseConfig(raw, 'test config'),
      (error: Error) => {
        assert.match(error.message, /notifications\.webhooks\.0\.url: .*credentials/)
        assert.ok(!error.message.includes(PASSWORD), error.message)
        return true
      },
    )
  })

  test('`warrant check` on such a config: exit 2 naming the key; nothing reaches the receiver (real process)', async () => {
    const receiver = await startReceiver(() => 204)
    const ws = await createCliWorkspace({
      count: 5,
      edit: (raw) => {
        raw.notifications = { webhooks: [{ name: 'reviewers', url: receiver.url.replace('http://', `http://hooks:${PASSWORD}@`) + '/hook', secret: { env: 'HOOK_SECRET' } }] }
      },
    })
    try {
      const checked = await runWarrant(['check', 'subscriptions'], ws.dir, { HOOK_SECRET: 'whsec-url-credentials' })
      assert.equal(checked.code, 2, checked.stdout + checked.stderr)
      assert.match(checked.stderr, /notifications\.webhooks\.0\.url/)
      assert.ok(!(checked.stdout + checked.stderr).includes(PASSWORD), checked.stderr)
      assert.equal(receiver.received.length, 0)
    } finally {
      await ws.drop()
      await receiver.close()
    }
  })
})

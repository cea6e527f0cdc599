import assert from 'node:assert/strict'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { createCliWorkspaceOn } from '../support/cli-config.js'
import { STORE_KINDS } from '../support/stores.js'
import { startReceiver } from '../ui/support.js'

/**
 * `warrant commit --wait` runs the operation in the CLI's process, which closes its gateway as soon as the
 * operation ends. The operation's end must still reach the reviewers: the notification is built and delivered
 * before the process exits (or, if the receiver does not answer in time, left pending for the next gateway),
 * never dropped because the notifier closed while the plan was being read for it.
 */
for (const kind of STORE_KINDS) {
  describe(`warrant commit --wait notifies the operation's end (${kind} store)`, () => {
    test('the receiver gets plan.awaiting_review, plan.decided and operation.finished; each delivery is delivered', { timeout: 180_000 }, async () => {
      const receiver = await startReceiver(() => 204)
      const ws = await createCliWorkspaceOn(kind, {
        count: 60,
        edit: (raw) => {
          raw.notifications = { webhooks: [{ name: 'reviewers', url: `${receiver.url}/hook`, secret: { file: 'webhook-secret' } }], timeout_ms: 30_000 }
        },
      })
      try {
        await writeFile(join(ws.dir, 'webhook-secret'), 'whsec-cli-0123456789\n')
        const token = async (...args: string[]) => JSON.parse((await ws.warrant(['token', 'create', ...args, '--json'])).stdout).token as string
        const reviewer = await token('--role', 'reviewer', '--name', 'alice')
        const agent = await token('--role', 'agent', '--name', 'ci-agent', '--resources', 'subscriptions', '--actions', 'pause_collection')
        const asAgent = (args: string[]) => ws.warrant([...args, '--token', agent])
        const selection = JSON.parse((await asAgent(['select', 'subscriptions', '-f', 'status=past_due', '-f', 'region=us', '--json', '-q'])).stdout)
        const plan = JSON.parse((await asAgent(['plan', selection.selection_id, '--action', 'pause_collection', '--param', 'reason=cli', '--json'])).stdout)
        assert.equal((await ws.warrant(['approve', plan.plan_id, '--digest', plan.plan_digest, '--token', reviewer])).code, 0)
        const committed = await asAgent(['commit', plan.plan_id, '--digest', plan.plan_digest, '--key', 'k-cli', '--wait', '-q'])
        assert.equal(committed.code, 0, committed.stderr)

        assert.deepEqual(
          receiver.received.map((r) => r.headers['x-warrant-event']),
          ['plan.awaiting_review', 'plan.decided', 'operation.finished'],
        )
        const finished = JSON.parse(receiver.received[2]!.body)
        assert.equal(finished.plan_id, plan.plan_id)
        assert.equal(finished.outcome.state, 'succeeded')
        const deliveries = await ws.withStore((store) => store.db.selectFrom('webhook_deliveries').select(['event', 'state']).orderBy('created_at').execute())
        assert.deepEqual(
          deliveries.map((d) => `${d.event}: ${d.state}`),
          ['plan.awaiting_review: delivered', 'plan.decided: delivered', 'operation.finished: delivered'],
        )
      } finally {
        await ws.drop()
        await receiver.close()
      }
    })
  })
}

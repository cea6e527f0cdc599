import assert from 'node:assert/strict'
import { createNotifier, type NotificationEvent, type Notifications } from '../../src/notifications/index.js'
import type { Store } from '../../src/store/index.js'
import type { startReceiver } from '../ui/support.js'

/** What the clock-skew suites share: a notifier on one store sending to one receiver, and a bounded wait. */
export type Receiver = Awaited<ReturnType<typeof startReceiver>>
export type Retry = { max_attempts: number; initial_backoff_ms: number; max_backoff_ms: number }

const silent = { warn: () => undefined, error: () => undefined }

export function notifierOn(store: Store, receiver: Receiver, retry: Retry): Notifications {
  return createNotifier({
    config: { webhooks: [{ name: 'reviewers', url: `${receiver.url}/hook`, format: 'json' }], retry, timeout_ms: 30_000 },
    store,
    log: silent,
    baseUrl: 'https://warrant.example',
    closeGraceMs: 100,
  })
}

export async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let waited = 0; !(await check()); waited += 20) {
    if (waited > 20_000) assert.fail(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

export const skewed = (ms: number) => () => new Date(Date.now() + ms)

/** An operation's end on plan `planId`: the event these suites send. */
export function operationFinished(planId: string): NotificationEvent {
  return {
    kind: 'operation.finished',
    plan: { plan_id: planId, resource: 'subscriptions', environment: 'billing-prod', action: 'pause_collection', target_count: 3 },
    operation_id: `op_${planId}`,
    state: 'succeeded',
    counts: { succeeded: 3 },
    halt_rule: null,
  }
}

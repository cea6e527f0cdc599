import { createHash, randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { type NotificationsConfig, readSecret } from '../config/index.js'
import { type RunEvent, WarrantError } from '../contract/index.js'
import { defaultOwner, storeNowColumn, type Store, type WebhookDeliveryRow, type WebhookDeliveryState } from '../store/index.js'
import { deliveryLeases, type StoreReading, storeReading, storeSecondsNow } from './delivery-lease.js'
import { type NotificationEvent, payloadOf } from './events.js'
import { type AttemptResult, answerOf, nextWait, unansweredOf } from './receiver-answer.js'
import { DELIVERY_HEADER, EVENT_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, signatureOf } from './signature.js'

/** One delivery of one event to one webhook, as the review pages show it. */
export interface WebhookDelivery {
  readonly delivery_id: string
  /** the webhook's name, or its scheme and host (never its path: a Slack URL is a secret) */
  readonly webhook: string
  readonly event: string
  readonly plan_id: string | null
  readonly operation_id: string | null
  readonly state: WebhookDeliveryState
  readonly attempts: number
  readonly last_status: number | null
  readonly last_error: string | null
  readonly created_at: string
  readonly updated_at: string
  readonly next_attempt_at: string | null
}

export interface Notifications {
  /** Whether any webhook is configured. */
  readonly enabled: boolean
  /**
   * Records a delivery per interested webhook and sends it in the background. Never throws, never waits. An event
   * still being built (a promise; null: none) is awaited by `close`, so a process that stops right after the
   * operation ended (`commit --wait`) still records, and within the grace still sends, its notification.
   */
  emit(event: NotificationEvent | Promise<NotificationEvent | null>): void
  /** The deliveries about one plan (and its operations), newest first. */
  deliveries(filter: { readonly plan_id: string }): Promise<readonly WebhookDelivery[]>
  /** Claims and resumes pending deliveries another process left (its lease expired). */
  resume(): Promise<void>
  /** Waits until this process's deliveries have settled (delivered, failed, or waiting for a retry that `close` would abandon). */
  flush(): Promise<void>
  /** Stops retrying; a delivery still pending stays in the store, released, and a later `resume` sends it when due. */
  close(): Promise<void>
}

export interface NotifierLog {
  warn(fields: object, message: string): void
  error(fields: object, message: string): void
}

export interface NotifierOptions {
  readonly config: NotificationsConfig | undefined
  readonly store: Store
  readonly log: NotifierLog
  /** Where the review pages are served, for links: `server.public_url`, else `http://host:port`. */
  /** Where the review pages are served; a function when that is known only later (the server's real port). */
  readonly baseUrl: string | (() => string)
  readonly env?: NodeJS.ProcessEnv
  /** Default: the global fetch. */
  readonly fetch?: typeof fetch
  /** Resume other processes' abandoned deliveries now and every 30 s (a serving gateway); default false. */
  readonly sweep?: boolean
  /** How long `close` lets requests in flight finish; default 2 s. */
  readonly closeGraceMs?: number
  /** The audit log: each attempt becomes a run-level `webhook.delivery` row. */
  readonly audit?: { record(event: RunEvent): Promise<unknown> }
  /** This instance's lease-owner name (the gateway's, `WARRANT_INSTANCE_ID@host:pid:…`); default: this process's. */
  readonly owner?: string
}

/**
 * What became of one attempt, as its audit row says. `taken_over`: its answer came after this notifier's lease had
 * lapsed and another had taken the delivery (the request was made all the same; the delivery's record is the other's).
 */
type AttemptOutcome = 'delivered' | 'retrying' | 'failed' | 'interrupted' | 'taken_over'
type DeliveryRun = { id: string; event: string; payload: string; attempts: number; plan_id: string | null; operation_id: string | null }

interface Hook {
  readonly key: string
  readonly label: string
  readonly url: string
  readonly secret: string | null
  readonly format: 'json' | 'slack'
  readonly events: ReadonlySet<string> | null
}

const SWEEP_EVERY_MS = 30_000
const DEFAULT_CONFIG: NotificationsConfig = { webhooks: [], retry: { max_attempts: 6, initial_backoff_ms: 1000, max_backoff_ms: 60_000 }, timeout_ms: 10_000 }

/**
 * Outbound webhooks: a JSON (or Slack-compatible) POST per event, the body signed with HMAC-SHA256, retried
 * with bounded exponential backoff. Every delivery and its last failure is kept in the store, so the review
 * pages can show that a reviewer was, or was not, told. Messages carry the environment, the action, the
 * count and a link, never record data.
 *
 * @example
 * const notifications = createNotifier({ config: config.notifications, store, log, baseUrl: 'https://warrant.example' })
 * notifications.emit({ kind: 'plan.awaiting_review', plan, reviewers_needed: 1, proposed_by: 'ci-agent', expires_at })
 */
export function createNotifier(options: NotifierOptions): Notifications {
  const config = options.config ?? DEFAULT_CONFIG
  const { store, log } = options
  const db = store.db
  const doFetch = options.fetch ?? fetch
  const hooks: Hook[] = config.webhooks.map((w, i) => {
    let secret: string | null = null
    if (w.secret) {
      try {
        secret = readSecret(w.secret, options.env)
      } catch (error) {
        // A wrong configuration, the operator's to mend: refused before anything is sent, never sent unsigned.
        throw new WarrantError('invalid_request', `notifications.webhooks[${i}].secret: ${(error as Error).message}`, { field: `notifications.webhooks[${i}].secret` })
      }
    }
    const origin = new URL(w.url).origin
    return { key: createHash('sha256').update(w.url).digest('hex').slice(0, 32), label: w.name ?? origin, url: w.url, secret, format: w.format, events: w.events ? new Set(w.events) : null }
  })
  const { max_attempts: maxAttempts, initial_backoff_ms: initialMs, max_backoff_ms: maxMs } = config.retry
  const timeoutMs = config.timeout_ms
  const backoff = (attempt: number) => Math.min(maxMs, initialMs * 2 ** (attempt - 1))
  /** Long enough for every attempt of one delivery: a lease past it means its process is gone. */
  let horizonMs = 60_000 + maxAttempts * timeoutMs
  for (let i = 1; i < maxAttempts; i++) horizonMs += backoff(i)
  const leases = deliveryLeases(db, options.owner ?? defaultOwner(), horizonMs)

  const inflight = new Set<Promise<void>>()
  const stopWaiting = new AbortController()
  const stopRequests = new AbortController()
  let closed = false
  /** `close` has finished: the store may be gone, nothing more can be recorded. */
  let finished = false
  let sweeper: NodeJS.Timeout | null = null

  const track = (work: Promise<void>) => {
    const p = work.catch((error: unknown) => log.error({ err: error }, 'webhook delivery failed unexpectedly')).finally(() => inflight.delete(p))
    inflight.add(p)
  }

  async function post(hook: Hook, row: { id: string; event: string; payload: string }, reading: StoreReading): Promise<AttemptResult> {
    // the store's time (see StoreReading): a receiver compares it with its own clock, whichever instance sends
    const timestamp = String(storeSecondsNow(reading))
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'Warrant-Webhook/0.1',
      [EVENT_HEADER]: row.event,
      [DELIVERY_HEADER]: row.id,
      [TIMESTAMP_HEADER]: timestamp,
    }
    if (hook.secret) headers[SIGNATURE_HEADER] = signatureOf(hook.secret, timestamp, row.payload)
    // a timer of our own, held until the attempt ends: an AbortSignal.timeout inside AbortSignal.any can be collected
    // before it fires (Node 20), and the attempt then waited for undici's 300 s headers timeout, not timeout_ms
    const timeout = new AbortController()
    const timer = setTimeout(() => timeout.abort(new DOMException(`no answer within ${timeoutMs} ms`, 'TimeoutError')), timeoutMs)
    try {
      const response = await doFetch(hook.url, {
        method: 'POST',
        headers,
        body: row.payload,
        redirect: 'manual',
        signal: AbortSignal.any([timeout.signal, stopRequests.signal]),
      })
      // the status is the answer; the body is never read (a receiver streaming without end cannot hold the attempt)
      await response.body?.cancel().catch(() => undefined)
      return answerOf(response, hook.url, Date.parse(store.now()))
    } catch (error) {
      const e = error as Error & { cause?: { code?: string; message?: string } }
      if (stopRequests.signal.aborted && e.name === 'AbortError') return { ok: false, status: null, error: null, stopped: true }
      return { ok: false, status: null, error: unansweredOf(e, timeoutMs) }
    } finally {
      clearTimeout(timer)
    }
  }

  /**
   * Whether a reviewer was told is part of the record: each attempt is an audit row (the label, never the URL: a
   * Slack URL is a secret). A failing audit append is logged; it never stops the delivery.
   */
  async function audited(hook: Hook, row: DeliveryRun, attempt: number, outcome: AttemptOutcome, result: { status: number | null; error: string | null }): Promise<void> {
    if (!options.audit) return
    const summary = { delivery_id: row.id, webhook: hook.label, event: row.event, attempt, outcome, status: result.status, error: result.error }
    await options.audit
      .record({ actor: null, surface: 'system', action: 'webhook.delivery', plan_id: row.plan_id, operation_id: row.operation_id, summary })
      .catch((error: unknown) => log.error({ err: error, delivery_id: row.id }, 'could not record a webhook delivery attempt in the audit log'))
  }

  /** Another notifier holds the delivery now (this one's lease lapsed): it sends and records it; this one stops. */
  function lost(hook: Hook, row: DeliveryRun, attempt: number): void {
    log.warn({ delivery_id: row.id, webhook: hook.label, event: row.event, attempt }, 'webhook delivery taken over by another gateway (this one held it past its lease); leaving it to that one')
  }

  /** Attempts a delivery until it is delivered, out of attempts, or this process closes (it stays pending, released). */
  async function run(hook: Hook, row: DeliveryRun, taken: StoreReading): Promise<void> {
    let reading = taken
    for (let attempt = row.attempts + 1; attempt <= maxAttempts; attempt++) {
      // A delivery emitted before or while closing gets its first attempt within the grace; never a retry.
      if (stopRequests.signal.aborted || (closed && attempt > row.attempts + 1)) return leases.release(row.id, store.now())
      // After a wait, only while the delivery is still this notifier's: one whose lease lapsed (a stalled process)
      // and was taken by another sends nothing, or the receiver would have it twice at once.
      if (attempt > row.attempts + 1) {
        const renewed = await leases.renew(row.id, store.now())
        if (!renewed) return lost(hook, row, attempt)
        reading = renewed
      }
      const result = await post(hook, row, reading)
      const now = store.now()
      // Cut short by this gateway stopping, not the receiver's doing: not counted; the next gateway sends it again
      // (the receiver may have had it: the same delivery id lets it de-duplicate).
      if (result.stopped) {
        const error = 'interrupted: the gateway stopped before the receiver answered; the next gateway sends it again'
        await leases.release(row.id, now, error)
        return audited(hook, row, attempt, 'interrupted', { status: null, error })
      }
      if (result.ok) {
        await db
          .updateTable('webhook_deliveries')
          .set({ state: 'delivered', attempts: attempt, last_status: result.status, last_error: null, updated_at: now, next_attempt_at: null, lease_until: null, lease_owner: null })
          .where('id', '=', row.id)
          .execute()
        return audited(hook, row, attempt, 'delivered', result)
      }
      const final = attempt >= maxAttempts || result.final === true
      // a 429 or 503 that said how long to wait is not asked again sooner; the record says what it asked
      const { waitMs: wait, note } = final ? { waitMs: 0, note: '' } : nextWait(result, backoff(attempt))
      const failure = { status: result.status, error: `${result.error ?? ''}${note}` }
      const recorded = await leases.failed(row.id, now, final ? null : wait, { attempts: attempt, last_status: failure.status, last_error: failure.error })
      // The request was made all the same: the chain has every one, even when the delivery is no longer this one's.
      if (!recorded) {
        await audited(hook, row, attempt, 'taken_over', failure)
        return lost(hook, row, attempt)
      }
      await audited(hook, row, attempt, final ? 'failed' : 'retrying', failure)
      const fields = { delivery_id: row.id, webhook: hook.label, event: row.event, attempt, status: failure.status, error: failure.error }
      if (final) {
        log.error(fields, 'webhook delivery failed; no more retries')
        return
      }
      log.warn({ ...fields, retry_in_ms: wait }, 'webhook delivery failed; retrying')
      try {
        await sleep(wait, undefined, { signal: stopWaiting.signal })
      } catch {
        return leases.release(row.id, store.now())
      }
    }
  }

  async function deliver(event: NotificationEvent): Promise<void> {
    const occurredAt = store.now()
    for (const hook of hooks) {
      if (hook.events && !hook.events.has(event.kind)) continue
      const id = `whd_${randomBytes(12).toString('hex')}`
      const payload = JSON.stringify(payloadOf(event, { format: hook.format, deliveryId: id, occurredAt, baseUrl: typeof options.baseUrl === 'function' ? options.baseUrl() : options.baseUrl }))
      const recorded = await db
        .insertInto('webhook_deliveries')
        .values({
          id,
          webhook_key: hook.key,
          webhook_label: hook.label,
          event: event.kind,
          plan_id: event.plan.plan_id,
          operation_id: 'operation_id' in event ? event.operation_id : null,
          payload,
          state: 'pending',
          attempts: 0,
          last_status: null,
          last_error: null,
          created_at: occurredAt,
          updated_at: occurredAt,
          ...leases.taken(occurredAt),
        })
        .returning(storeNowColumn(db, occurredAt).as('store_now'))
        .executeTakeFirstOrThrow()
      track(run(hook, { id, event: event.kind, payload, attempts: 0, plan_id: event.plan.plan_id, operation_id: 'operation_id' in event ? event.operation_id : null }, storeReading(recorded.store_now)))
    }
  }

  async function resume(): Promise<void> {
    if (closed || hooks.length === 0) return
    const now = store.now()
    for (const row of await leases.due(now, 100)) {
      // Claimed only if no other notifier claimed it since it was read.
      const claimed = await leases.claim(row.id, now)
      if (!claimed) continue
      const hook = hooks.find((h) => h.key === row.webhook_key)
      if (!hook) {
        await db
          .updateTable('webhook_deliveries')
          .set({ state: 'failed', last_error: 'this webhook is no longer configured', updated_at: now, lease_until: null, lease_owner: null, next_attempt_at: null })
          .where('id', '=', row.id)
          .execute()
        continue
      }
      track(run(hook, { id: row.id, event: row.event, payload: row.payload, attempts: row.attempts, plan_id: row.plan_id, operation_id: row.operation_id }, claimed))
    }
  }

  /** Until every delivery this process started (and every event still being built) has settled. */
  async function settle(): Promise<void> {
    while (inflight.size > 0) await Promise.allSettled([...inflight])
  }

  if (options.sweep && hooks.length > 0) {
    const tick = () => void resume().catch((error: unknown) => log.error({ err: error }, 'resuming webhook deliveries failed'))
    tick()
    sweeper = setInterval(tick, SWEEP_EVERY_MS)
    sweeper.unref?.()
  }

  return {
    enabled: hooks.length > 0,

    emit(event) {
      if (hooks.length === 0) return
      if (finished) {
        log.error({}, 'a notification came after the notifier closed; it was not recorded')
        return
      }
      track(Promise.resolve(event).then((built) => (built ? deliver(built) : undefined)))
    },

    async deliveries({ plan_id }) {
      const rows = await db.selectFrom('webhook_deliveries').selectAll().where('plan_id', '=', plan_id).orderBy('created_at', 'desc').orderBy('id').limit(200).execute()
      return rows.map(toDelivery)
    },

    resume,

    flush: settle,

    async close() {
      closed = true
      if (sweeper) clearInterval(sweeper)
      stopWaiting.abort()
      const grace = sleep(options.closeGraceMs ?? 2000, undefined, { ref: false }).then(() => stopRequests.abort())
      await Promise.race([settle(), grace])
      stopRequests.abort()
      // until nothing is left: an event built during the grace adds its delivery after the first snapshot
      await settle()
      finished = true
    },
  }
}

function toDelivery(row: WebhookDeliveryRow): WebhookDelivery {
  return {
    delivery_id: row.id,
    webhook: row.webhook_label,
    event: row.event,
    plan_id: row.plan_id,
    operation_id: row.operation_id,
    state: row.state,
    attempts: Number(row.attempts),
    last_status: row.last_status,
    last_error: row.last_error,
    created_at: row.created_at,
    updated_at: row.updated_at,
    next_attempt_at: row.next_attempt_at,
  }
}

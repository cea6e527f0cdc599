import { isWarrantError, SYSTEM_ACTOR } from '../contract/index.js'
import { callContext, type SourceRecord } from '../connectors/index.js'
import type { OperationTargetRow } from '../store/index.js'
import type { ExecutorDeps, OperationRunner } from './executor-deps.js'
import { keepLease, releaseLease } from './lease.js'
import { countPendingRateLimit, countTargets, countValidationFailures, endOperation, errorsInARow, loadOperationRow, markInFlight, markInterrupted, rateLimitHitsSoFar, releaseUnstarted, targetsInState } from './ledger.js'
import { checkBatchMembership } from './membership.js'
import { trackOutcomeCommits } from './outcome-commits.js'
import { Pacer } from './pacer.js'
import { createRatePause } from './rate-pause.js'
import { StopRuleTracker, upstreamMovedHalt } from './stop-rules.js'
import { NO_TELEMETRY, type Telemetry } from '../telemetry/index.js'
import { callContextOf, executeTarget, readWindow, type Reread, type StepResult, type TargetContext } from './target-step.js'
import { executeWindow } from './window-step.js'
import { FINISHED_STATES, type HaltReason, type OperationExecution, type StopRules } from './types.js'
import { enforcedFor, provenBy } from './version-proof.js'
import { rateLimitKindFor } from './wait-words.js'

export type { ExecutorDeps, ExecutorLog, OperationRunner, RunRecorder } from './executor-deps.js'

/**
 * Starts executing an operation whose lease `deps.owner` holds. Targets start in member order, at most
 * `concurrency` at once (a rolling window; batch by batch when each batch's membership must be re-read first)
 * and `max_writes_per_second`; the stop rules stored on the operation decide when it halts, leaving every later
 * target `pending`.
 */
export function startRunner(deps: ExecutorDeps, operationId: string, heldUntil: number): OperationRunner {
  const abort = new AbortController()
  const telemetry = deps.telemetry ?? NO_TELEMETRY
  const done = telemetry.span('warrant.operation.run', { 'warrant.operation_id': operationId }, () => run(deps, operationId, heldUntil, abort)).catch((error: unknown) => {
    // a store whose file is gone (store_unavailable naming a file) has no lease to expire: nothing resumes until a
    // restart on the right file; a store unreachable or busy for now is the failure below, its lease expiring
    if (isWarrantError(error) && error.code === 'store_unavailable' && (error.details as { file?: unknown } | undefined)?.file !== undefined)
      deps.log.error({ err: error, operation_id: operationId }, 'operation executor stopped: the store is unavailable, so no further write is sent; restart the gateway on the right store file')
    else deps.log.error({ err: error, operation_id: operationId }, 'operation executor failed; the lease will expire and another executor may resume it')
  })
  return { operationId, done, stop: () => abort.abort() }
}

async function run(deps: ExecutorDeps, operationId: string, heldUntil: number, abort: AbortController): Promise<void> {
  const { store, owner } = deps
  const db = store.db
  const now = () => deps.clock().toISOString()
  const row = await loadOperationRow(db, operationId)
  if (row.lease_owner !== owner || FINISHED_STATES.has(row.state)) return
  if (row.execution === null) {
    deps.log.error({ operation_id: operationId }, 'operation has no execution record; it cannot be executed')
    await releaseLease(db, operationId, owner, now())
    return
  }
  const execution = JSON.parse(row.execution) as OperationExecution
  const rules = JSON.parse(row.stop_rules) as StopRules
  const resource = execution.plan.resource
  const telemetry = deps.telemetry ?? NO_TELEMETRY
  telemetry.annotate({ 'warrant.plan_id': execution.plan.plan_id, 'warrant.selection_digest': execution.selection.digest, 'warrant.resource': resource })

  // We hold the lease: whatever the previous holder left in flight has no durable answer.
  const ids = { operation_id: operationId, plan_id: execution.plan.plan_id, selection_id: execution.selection.selection_id }
  const audit = (action: string, summary: Record<string, unknown>) =>
    deps.audit?.record({ actor: SYSTEM_ACTOR, surface: 'system', action, summary: { ...summary, instance: owner }, ...ids })
      .catch((error: unknown) => deps.log.error({ err: error, operation_id: operationId }, 'could not record an executor event in the audit log'))
  const interrupted = await markInterrupted(db, operationId, now())
  if (interrupted > 0) {
    deps.log.warn({ operation_id: operationId, targets: interrupted }, 'in-flight targets of an interrupted executor are now unknown')
    await audit('operation.recovered', { interrupted_targets_now_unknown: interrupted })
  }

  const lease = keepLease({
    db,
    operationId,
    owner,
    leaseMs: deps.leaseMs,
    clock: deps.clock,
    // not the row's lease_expires_at: on PostgreSQL that is the database's time, not this process's clock
    heldUntil,
    onLost: () => abort.abort(),
    onError: (error) => deps.log.warn({ err: error, operation_id: operationId }, 'lease renewal failed; retrying'),
  })

  // resumed by a process started on another config: moved since the proposal, nothing is sent (see `placeMoved`)
  const moved = (await deps.placeMoved?.(execution)) ?? null
  const connector = deps.connectorFor(resource)
  if (moved === null) await connector.refreshFacts?.() // writes judged on the catalogue as it is now (a trigger added since, say)
  const unproven = (error: unknown) => deps.log.warn({ err: error, operation_id: operationId }, 'could not read the write probe of this action; every target is re-read before its write')
  const proofs = moved === null ? await provenBy(connector, deps.versionProof, execution, unproven) : new Map<string, never>()
  if (proofs.size > 0) await audit('operation.version_enforced', { proven_by: 'write_probe', sources: [...proofs].map(([source, p]) => ({ source, probed_at: p.probed_at, probed_record: p.record_id, detail: p.detail })) })
  const ctx: TargetContext = {
    db,
    operationId,
    owner,
    connector,
    execution,
    render: (target) => deps.renderWrite(execution, target),
    hidden: deps.hiddenFields(resource),
    fieldTypes: deps.fieldTypes(resource),
    now,
    telemetry,
    versionEnforced: connector.writeEnforcesVersion === true,
    provenSources: new Set(proofs.keys()),
    leaseHolds: () => lease.holds(),
  }
  // each window one statement: only where a record read with its window needs no second read (the version is enforced)
  const windowed = connector.writeWindow !== undefined && ctx.versionEnforced === true
  // targets claimed (and, windowed, written by one statement) at a time: a sql resource's write_window as its plan bound
  // it (the connector's may be raised since, unreviewed; a plan that bound none: the connector's); else the concurrency
  const window = Math.max(1, windowed ? ((rules.write_window === undefined ? connector.writeWindowSize : rules.write_window) ?? rules.concurrency) : rules.concurrency)
  // a resumed operation goes on counting where its last executor stopped: every threshold holds across restarts
  const soFar = await Promise.all([countValidationFailures(db, operationId), errorsInARow(db, operationId, rules.halt_after_consecutive_errors), rateLimitHitsSoFar(db, operationId)])
  const tracker = new StopRuleTracker(rules, now, ...soFar)
  const pacer = new Pacer(rules.max_writes_per_second, abort.signal, () => deps.clock().getTime(), deps.wait)
  let halt: HaltReason | null = moved === null ? null : upstreamMovedHalt(operationId, moved, now(), execution.plan.compensates !== null)

  const haltAt = (rule: HaltReason['rule'], target: OperationTargetRow, message: string): HaltReason => ({ rule, target_id: target.record_id, ord: target.ord, message, at: now() })
  const pause = createRatePause({
    db,
    operationId,
    owner,
    rules,
    tracker,
    pacer,
    telemetry,
    resource,
    now,
    onError: (error) => deps.log.warn({ err: error, operation_id: operationId }, 'could not record the Retry-After pause on the operation; its view will not show it'),
  })
  pause.resumeFrom(row)
  const rateLimited = pause.rateLimited

  // the first outcome the store fails to commit stops the run; the run ends once every outcome has committed
  const commits = trackOutcomeCommits(() => abort.abort())

  /** One target's turn: its outcome feeds the stop rules; a 429 puts it back (`retry`) or halts. */
  const step = async (target: OperationTargetRow, retry: (t: OperationTargetRow) => Promise<void>, claimed = false, read?: Reread): Promise<void> => {
    await observe(target, await executeTarget(ctx, target, claimed, read), retry)
  }
  /** The lease lost its margin (expired unrenewed: a stalled process, a store that stopped answering): stop starting targets. */
  const leaseEnded = () => {
    if (!abort.signal.aborted) deps.log.warn({ operation_id: operationId, lease_lost: lease.lost() }, 'the lease ran out before it could be renewed; stopping, the targets not sent pending again')
    abort.abort()
  }
  const observe = async (target: OperationTargetRow, result: StepResult, retry: (t: OperationTargetRow) => Promise<void>): Promise<void> => {
    if (result.kind === 'not_claimed') return
    if (result.kind === 'lease_ended') {
      await result.returned
      leaseEnded()
      return
    }
    if (result.kind === 'recorded') commits.track(result.committed)
    if (result.kind === 'rate_limited') {
      const stop = rateLimited(target, result)
      await result.returned
      if (stop) halt ??= stop
      else await retry(result.again)
      return
    }
    const fired = tracker.observe(result.observed)
    if (fired) halt ??= fired
  }
  const running = () => halt === null && !abort.signal.aborted

  /**
   * A rolling window: `concurrency` workers take targets in member order. Targets come from `feed` (the pending
   * ones a page at a time, or one batch), read before the queue runs dry, and are put `in_flight` a window at a
   * time (`concurrency` targets, one transaction: one sync instead of one per target; the feed's last few ride
   * with the window before them, see claimSize) before any of them is written; the next window is claimed
   * while the last is still being written, so no worker waits for a batch to drain. `readChunk` gives a
   * window's records where the write enforces the version (else each target is re-read alone). A crash leaves
   * in flight (so unknown, reconciled later) the targets being written, those answered in the last few
   * milliseconds (outcomes commit in groups), and up to two windows claimed and not started (two and a half at
   * the feed's end); none is written twice. Targets claimed and never started when the run stops or halts go
   * back to pending.
   */
  const runWindow = async (
    /** the next targets in member order; `last`: no more will come (else the feed is asked until it gives none) */
    feed: () => Promise<{ readonly targets: readonly OperationTargetRow[]; readonly last: boolean }>,
    /** never rejects: a read that fails is null, and each target is then read alone */
    readChunk: (chunk: readonly OperationTargetRow[]) => Promise<ReadonlyMap<string, Reread> | null>,
  ): Promise<void> => {
    const queue: OperationTargetRow[] = []
    const claimed: OperationTargetRow[] = []
    let exhausted = false
    let fetching: Promise<void> | null = null
    let claiming: Promise<void> | null = null
    const refill = () =>
      (fetching ??= feed()
        .then(({ targets, last }) => {
          queue.push(...targets)
          if (targets.length === 0 || last) exhausted = true
        })
        .finally(() => (fetching = null)))
    /** Reads more targets before the queue runs dry; waits only when there is nothing else to do. */
    const topUp = async () => {
      if (queue.length > 2 * window || exhausted) return
      const filling = refill()
      if (queue.length === 0 && claimed.length === 0) await filling
      else filling.catch(() => undefined)
    }
    // records read with their window or batch (where the write enforces the version), by ord
    const reads = new Map<number, Reread>()
    const claim = () =>
      (claiming ??= (async () => {
        // no target goes in flight without the lease's margin: its write would be refused at once (see leaseHolds)
        if (!lease.holds()) return leaseEnded()
        const chunk = queue.splice(0, claimSize(queue.length, window, exhausted))
        const at = now()
        // The window's read (upstream) and its in-flight marks (the store) go at once: neither needs the other,
        // and a window waited for both in turn. The marks are asked for in one turn, so the ledger commits them
        // as one statement in one transaction; the read never throws (no read: each target is read alone).
        const [read, marked] = await Promise.all([readChunk(chunk), Promise.all(chunk.map((t) => markInFlight(db, operationId, t.ord, owner, at)))])
        chunk.forEach((t, i) => {
          if (!marked[i]) return
          const record = read?.get(t.record_id)
          if (record) reads.set(t.ord, record)
          claimed.push(t)
        })
      })().finally(() => (claiming = null)))
    /**
     * After a 429 paused the operation: the targets it put back go first, in member order, ahead of any window
     * claimed meanwhile, which goes back to pending unstarted (else a later target would be written before an
     * earlier one, past a halt the earlier one's retries would call, and it would sit in flight, never sent,
     * through the pause: a crash would make it `unknown`). Nothing is claimed again until the pause ends.
     */
    const putBack = async (retried: readonly OperationTargetRow[]) => {
      await (claiming as Promise<void> | null)?.catch(() => undefined)
      const ahead = claimed.splice(0)
      for (const t of ahead) reads.delete(t.ord)
      if (ahead.length > 0) await releaseUnstarted(db, operationId, ahead.map((t) => t.ord), now())
      queue.unshift(...retried, ...ahead)
    }
    /**
     * Where the connector writes a window as one statement (`writeWindow`, with the version enforced by the
     * write): one loop writes each claimed window whole, while the next is claimed and read. The window is
     * the resource's `write_window` targets (default: `concurrency`, so no more are in flight than target by
     * target); the stop rules see every outcome of a window, in member order, before the next window starts,
     * so an operation halts at most one window past the target that fired.
     */
    const windowLoop = async () => {
      while (running()) {
        await topUp()
        if (claimed.length === 0) {
          if (queue.length > 0) await pacer.resumed().then(claim)
          else if (claiming !== null) await claiming
          else if (fetching !== null) await fetching
          else if (exhausted) return
          continue
        }
        const chunk = claimed.splice(0, window)
        // the next window is claimed (and read) while this one is written
        if (queue.length > 0) claim().catch(() => undefined)
        for (let paced = 0; paced < chunk.length; paced++) {
          await pacer.acquire()
          if (!running()) {
            claimed.unshift(...chunk)
            return
          }
        }
        if (!lease.holds()) {
          claimed.unshift(...chunk)
          return leaseEnded()
        }
        const results = await executeWindow(
          ctx,
          chunk.map((target) => {
            const read = reads.get(target.ord)
            reads.delete(target.ord)
            return read ? { target, read } : { target }
          }),
        )
        const retried: OperationTargetRow[] = []
        for (const [i, result] of results.entries()) await observe(chunk[i]!, result, async (t) => void retried.push(t))
        if (retried.length > 0) await putBack(retried)
      }
    }
    const worker = async () => {
      while (running()) {
        await topUp()
        if (claimed.length < window && queue.length > 0) {
          await pacer.resumed()
          const next = claim()
          if (claimed.length === 0) await next
          else next.catch(() => undefined)
        }
        if (claimed.length === 0) {
          if (claiming !== null) await claiming
          else if (fetching !== null) await fetching
          else if (exhausted && queue.length === 0) return
          continue
        }
        await pacer.acquire()
        if (!running()) return
        // the lease may have expired unrenewed (a stalled process): stop; the unstarted go back to pending
        if (!lease.holds()) return leaseEnded()
        const target = claimed.shift()
        if (!target) continue
        const read = reads.get(target.ord)
        reads.delete(target.ord)
        // a 429 put the target back to pending: it is claimed (and read) again with a later window
        await step(target, (t) => putBack([t]), true, read)
      }
    }
    try {
      if (windowed) await windowLoop()
      else await Promise.all(Array.from({ length: window }, worker))
    } finally {
      await (claiming as Promise<void> | null)?.catch(() => undefined) // a claim still committing when the workers stopped
      const unstarted = claimed.splice(0).map((t) => t.ord)
      if (unstarted.length > 0) await releaseUnstarted(db, operationId, unstarted, now())
    }
  }

  try {
    if (!rules.revalidate_membership_per_batch) {
      let afterOrd = -1
      const pending = async () => {
        const page = await targetsInState(db, operationId, 'pending', afterOrd, Math.max(rules.batch_size, 2 * window))
        if (page.length > 0) afterOrd = page[page.length - 1]!.ord
        return { targets: page, last: false }
      }
      await runWindow(pending, (chunk) => readWindow(ctx, chunk))
    } else {
      let afterOrd = -1
      while (running()) {
        const batch = await targetsInState(db, operationId, 'pending', afterOrd, rules.batch_size)
        if (batch.length === 0) break
        // each batch is re-read right before its first write, so batches run one after the other
        let reads: ReadonlyMap<string, SourceRecord> | undefined
        for (;;) {
          // the batch's reads are this operation's upstream calls: the audit log says so
          const check = await callContext.run(callContextOf(ctx), () => checkBatchMembership(ctx.connector, execution, batch, ctx.fieldTypes))
          if (check.kind === 'unchanged') {
            reads = check.records
            break
          }
          if (check.kind === 'changed') halt = haltAt(check.rule, check.target, check.message)
          else {
            halt = rateLimited(batch[0]!, check.retryAfterSeconds === undefined ? { retryAfterSeconds: 1, message: check.message, defaulted: true } : { retryAfterSeconds: check.retryAfterSeconds, message: check.message })
            // counted on the row too, as a write's 429 is: a restart goes on counting
            if (halt === null) await countPendingRateLimit(db, operationId, batch[0]!.ord, owner)
          }
          if (halt !== null) break
          await pacer.acquire()
          if (abort.signal.aborted) break
        }
        if (!running()) break
        // the batch drains before the next is re-read; its windows are claimed like any other. A target read
        // with the batch is not read again alone where the write enforces the version; one put back after a
        // 429 is (its batch read is older than the pause): each read serves once.
        const batchReads = reads ? new Map(reads) : null
        let fed = false
        await runWindow(
          async () => (fed ? { targets: [], last: true } : ((fed = true), { targets: batch, last: true })),
          async (chunk) => {
            if (!batchReads) return null
            const out = new Map<string, Reread>()
            for (const t of chunk) {
              const record = batchReads.get(t.record_id)
              batchReads.delete(t.record_id)
              if (record && enforcedFor(ctx, t)) out.set(t.record_id, { kind: 'found', record })
            }
            return out
          },
        )
        afterOrd = batch[batch.length - 1]!.ord
      }
    }
  } finally {
    await commits.settled()
    await pause.settled()
    lease.stop()
  }
  const failed = commits.failure()
  if (failed !== null) throw failed.error

  const counts = await countTargets(db, operationId)
  if (halt === null && (counts.pending > 0 || counts.in_flight > 0)) {
    // Stopped (closing, or the lease was lost) before the end: nothing is decided; another executor resumes.
    if (!lease.lost()) await releaseLease(db, operationId, owner, now())
    deps.log.info({ operation_id: operationId, lease_lost: lease.lost(), counts }, 'operation executor stopped before the end')
    return
  }
  const end = await endOperation(store, operationId, owner, halt, now(), rateLimitKindFor(execution, () => connector.kind))
  if (!end.finished) {
    deps.log.warn({ operation_id: operationId }, 'operation could not be finished: the lease is no longer ours')
    return
  }
  const { state, nowUnknown } = end
  telemetry.add('warrant_operations_total', { resource, state })
  deps.log.info({ operation_id: operationId, state, counts: end.counts, halt_reason: halt }, 'operation finished')
  await audit(halt ? 'operation.halted' : 'operation.finished', { state, counts: end.counts, halt_reason: halt, ...(nowUnknown.length > 0 ? { rate_limited_writes_now_unknown: nowUnknown } : {}) })
}

/**
 * How many targets one claim puts in flight: a window, or, once the feed has no more and what is left past this
 * window is at most half a window, all of it. A batch of 50 at a window of 16 was claimed 16, 16, 16 and 2, each
 * claim a synced commit that blocks the event loop; now 16, 16 and 18: one sync fewer per batch, and at most half
 * a window more in flight (a crash leaves it `unknown`, as it leaves any claimed window).
 */
export function claimSize(queued: number, window: number, exhausted: boolean): number {
  return exhausted && queued <= window + Math.floor(window / 2) ? queued : window
}

import type { OperationExecution } from './types.js'

/**
 * What an operation's "not now" answers were, in its upstream's terms: the one place the surfaces (CLI, MCP, the
 * review page) take these words from, by the operation's `rate_limit_kind` (recorded at commit), never by guessing.
 *
 * `http`: the upstream answered 429 (or a read's 503 with Retry-After), and the wait it named was honoured.
 * `database_lock`: a sql resource's database did not grant a lock in time (a lock wait or lock_timeout, a deadlock,
 * SQLite busy): it rolled the statement back, nothing written (refused at COMMIT, whether it committed is not proven:
 * `reasons`, `write`), and the sql connector retries it after a pause of its own. No 429 and no Retry-After exist there (the 503 the connector classifies it with is its own, never shown).
 * null: not known (an operation committed before the kind was recorded, on a resource no longer configured).
 */
export type RateLimitKind = 'http' | 'database_lock'

export interface WaitWords {
  /** the CLI's label of the line: "rate limited" */
  readonly label: string
  /** what happened, as the subject of "… N times on M targets" */
  readonly answered: string
  /** what became of each such answer: "each was waited out" */
  readonly each: string
  /** what a target met, as the object of "N targets met …" */
  readonly met: string
  /** none happened */
  readonly never: string
  /** why writes are paused now, before the connector's or upstream's own words */
  readonly paused: string
  /**
   * A target's reason in words (target-reasons.ts), where it depends on what the waits are. `waiting`: pending
   * (reason `rate_limited`), its write not sent or proven not applied. `writeWaiting`: pending, its write sent and
   * answered so (`rateLimitedWriteSent`), so it may have landed. `halted`: such a write, never retried because the
   * operation halted (`rate_limited_halted`). `applied`: such a write's record found since at a new version holding the
   * approved change (`rate_limited_applied`).
   */
  readonly reasons: { readonly waiting: string; readonly writeWaiting: string; readonly halted: string; readonly applied: string }
  /**
   * A target's error where a write of it was answered "not now" and may have landed (ledger.ts `unknownAtHalt`,
   * target-step.ts `rateLimitedApplied`): `sent`, "a write … was sent and …"; `was`, "a write … …, yet"; `mayHave`,
   * what that leaves; `despite`, "may have been applied …".
   */
  readonly write: { readonly sent: string; readonly was: string; readonly mayHave: string; readonly despite: string }
}

const HTTP: WaitWords = {
  label: 'rate limited',
  answered: 'the upstream answered "not now" (429, or 503 with Retry-After)',
  each: 'each was waited out',
  met: '"not now" (429, or 503 with Retry-After)',
  never: 'no 429 or Retry-After answer',
  paused: 'the upstream asked to wait',
  reasons: {
    waiting: 'waiting: the upstream asked to try again later; nothing was written yet',
    // that nothing was written is the upstream's word only: an upstream may apply a write and refuse the rate after
    writeWaiting:
      'waiting: its write was sent and answered 429 (rate limited), which says the upstream did not apply it; a retry, while the operation goes on, reads the record first and is not sent again if it holds the approved change (then unknown)',
    halted: 'its write was sent and answered 429 (rate limited), and not retried: the operation halted first; the upstream may have applied it all the same: reconcile to settle it',
    applied: 'a write answered 429 (rate limited) was not sent again: the record since holds the approved change at a new version, so that write may have landed; reconcile to settle it',
  },
  write: { sent: 'was sent and answered 429 (rate limited)', was: 'was answered 429 (rate limited)', mayHave: 'the upstream may have applied it all the same', despite: 'despite the 429' },
}

/**
 * A sql resource: a lock refused while the statement ran (or at BEGIN) rolled the statement back, proven (the
 * connector's `notApplied`): `waiting`. A lock refused at COMMIT (SQLite busy, a serialization failure or deadlock
 * there) proves nothing of whether the transaction committed (errors.ts, CommitFailedError): the write's words.
 */
const DATABASE_LOCK_REASONS: WaitWords['reasons'] = {
  waiting: 'waiting: the database did not grant a lock in time (a lock wait, a deadlock, SQLite busy) and rolled the write back; nothing was written yet, it is tried again after a pause',
  writeWaiting:
    'waiting: its write was sent and its COMMIT refused for a lock (SQLite busy, a serialization failure or deadlock at COMMIT), which does not prove the database did not commit it; a retry, while the operation goes on, reads the record first and is not sent again if it holds the approved change (then unknown)',
  halted: 'its write was sent and its COMMIT refused for a lock, and not retried: the operation halted first; the database may or may not have committed it: reconcile to settle it',
  applied: 'a write whose COMMIT was refused for a lock was not sent again: the record since holds the approved change at a new version, so that write may have been committed; reconcile to settle it',
}

const DATABASE_LOCK: WaitWords = {
  label: 'lock waits',
  answered: 'the database held a lock past the time limit or ended a deadlock (a lock wait, a deadlock, SQLite busy)',
  each: 'each such write was rolled back (nothing written), waited out',
  met: 'a lock wait (the database held a lock past the time limit, or ended a deadlock)',
  never: 'no lock wait, deadlock or busy database',
  paused: 'the database was busy: a lock was not granted in time',
  reasons: DATABASE_LOCK_REASONS,
  write: { sent: 'was sent and its COMMIT refused for a lock', was: 'had its COMMIT refused for a lock', mayHave: 'the database may or may not have committed it', despite: 'despite the refusal' },
}

const UNKNOWN: WaitWords = {
  label: 'rate limited',
  answered: 'the upstream answered "not now"',
  each: 'each was waited out',
  met: '"not now"',
  never: 'no "not now" answer',
  paused: 'the upstream asked to wait',
  // what the answers were is not known: nothing claimed of them but "not now"
  reasons: {
    waiting: 'waiting: the upstream said "not now"; nothing was written yet',
    writeWaiting:
      'waiting: its write was sent and answered "not now", which does not prove it was not applied; a retry, while the operation goes on, reads the record first and is not sent again if it holds the approved change (then unknown)',
    halted: 'its write was sent and answered "not now", and not retried: the operation halted first; the upstream may have applied it all the same: reconcile to settle it',
    applied: 'a write answered "not now" was not sent again: the record since holds the approved change at a new version, so that write may have landed; reconcile to settle it',
  },
  write: { sent: 'was sent and answered "not now"', was: 'was answered "not now"', mayHave: 'the upstream may have applied it all the same', despite: 'despite that answer' },
}

export function waitWords(kind: RateLimitKind | null): WaitWords {
  return kind === 'http' ? HTTP : kind === 'database_lock' ? DATABASE_LOCK : UNKNOWN
}

/** The kind of an upstream's waits, from the kind of connector the resource writes through. */
export function rateLimitKindOf(connector: 'sql' | 'http' | null | undefined): RateLimitKind | null {
  return connector === 'sql' ? 'database_lock' : connector === 'http' ? 'http' : null
}

/**
 * What the operation's "not now" answers are: by the kind of connector recorded at commit; for an operation committed
 * before that was recorded, the resource's kind as configured now (`configured`), null where it is gone.
 */
export function rateLimitKindFor(execution: OperationExecution | null, configured: (resource: string) => 'sql' | 'http' | null): RateLimitKind | null {
  if (execution === null) return null
  return rateLimitKindOf(execution.upstream ?? configured(execution.plan.resource))
}

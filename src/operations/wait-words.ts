/**
 * What an operation's "not now" answers were, in its upstream's terms: the one place the surfaces (CLI, MCP, the
 * review page) take these words from, by the operation's `rate_limit_kind` (recorded at commit), never by guessing.
 *
 * `http`: the upstream answered 429 (or a read's 503 with Retry-After), and the wait it named was honoured.
 * `database_lock`: a sql resource's database did not grant a lock in time (a lock wait or lock_timeout, a deadlock,
 * SQLite busy): it rolled the statement back, nothing written, and the sql connector retries it after a pause of its
 * own. No 429 and no Retry-After exist there (the 503 the connector classifies it with is its own, never shown).
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
}

const HTTP: WaitWords = {
  label: 'rate limited',
  answered: 'the upstream answered "not now" (429, or 503 with Retry-After)',
  each: 'each was waited out',
  met: '"not now" (429, or 503 with Retry-After)',
  never: 'no 429 or Retry-After answer',
  paused: 'the upstream asked to wait',
}

const DATABASE_LOCK: WaitWords = {
  label: 'lock waits',
  answered: 'the database held a lock past the time limit or ended a deadlock (a lock wait, a deadlock, SQLite busy)',
  each: 'each such write was rolled back (nothing written), waited out',
  met: 'a lock wait (the database held a lock past the time limit, or ended a deadlock)',
  never: 'no lock wait, deadlock or busy database',
  paused: 'the database was busy: a lock was not granted in time',
}

const UNKNOWN: WaitWords = {
  label: 'rate limited',
  answered: 'the upstream answered "not now"',
  each: 'each was waited out',
  met: '"not now"',
  never: 'no "not now" answer',
  paused: 'the upstream asked to wait',
}

export function waitWords(kind: RateLimitKind | null): WaitWords {
  return kind === 'http' ? HTTP : kind === 'database_lock' ? DATABASE_LOCK : UNKNOWN
}

/** The kind of an upstream's waits, from the kind of connector the resource writes through. */
export function rateLimitKindOf(connector: 'sql' | 'http' | null | undefined): RateLimitKind | null {
  return connector === 'sql' ? 'database_lock' : connector === 'http' ? 'http' : null
}

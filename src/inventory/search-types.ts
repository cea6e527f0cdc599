import type { Envelope, Filter } from '../contract/index.js'
import type { SourceRecord } from '../connectors/connector.js'
import type { CursorCodec } from './cursor-codec.js'

export interface SearchQuery {
  readonly resource: string
  readonly filter: Filter
  /** The fields the caller will project; part of the query's identity (a cursor is bound to them). */
  readonly fields?: readonly string[]
  /** Upstream page size; default 100. */
  readonly pageSize?: number
  /** A continuation cursor from an earlier part of the same walk. */
  readonly cursor?: string | null
}

/** Warrant's own limits on one call. Reaching one is reported, never hidden. */
export interface Budget {
  /** Upstream pages read in this call; default 1000. */
  readonly maxPages?: number
  /** Items returned by this call; default 100 000. The walk stops at a page boundary once it reaches this. */
  readonly maxItems?: number
  /** Wall-clock budget of this call; default 30 s. Also aborts a page read still in flight. */
  readonly deadlineMs?: number
}

export interface SearchScope {
  readonly resource: string
  /** Human-readable environment, e.g. "billing-prod (acct 4411)". Part of the query's identity. */
  readonly environment: string
  /** What the credential can see, in words. */
  readonly visibility: string
  /** The credential cannot see the whole resource: no walk can be complete, and hidden records are never named. */
  readonly restricted: boolean
  /**
   * Where the connector reads and by what it names records (the gateway passes `upstreamDigestOf`): part of the query's
   * identity, so a cursor's positions are never followed in another table or list, or by another id column.
   */
  readonly upstream?: string
}

export interface SearchOptions {
  readonly scope: SearchScope
  readonly cursorCodec: CursorCodec
  readonly clock?: { now(): number }
  /** The caller's cancellation: the call rejects with the signal's reason. */
  readonly signal?: AbortSignal
  /** `walk` (default): read to a terminal state or a budget. `page`: read one upstream page, then hand back a cursor. */
  readonly mode?: 'walk' | 'page'
  /**
   * The longest wait after a 429 or 503 the walk names in a `retry_after` continuation (its own backoff never
   * passes it; an upstream asking for longer ends that source); default 300 s, and never past the cursor's age.
   * The gateway passes `execution.max_retry_after_seconds`.
   */
  readonly maxRetryAfterSeconds?: number
  /**
   * `false`: the caller never continues this walk with its cursor (a selection is created again, never continued),
   * so the reasons say what a new walk needs, not "the cursor resumes it". Default `true` (a search).
   */
  readonly resumable?: boolean
  /**
   * The longest deadline the caller's surface takes (`SEARCH_MAX_DEADLINE_MS`, `SELECTION_MAX_DEADLINE_MS`): a walk
   * cut by its deadline never asks for more, and asks to narrow the query where it already had it. Default none.
   */
  readonly maxDeadlineMs?: number
}

/** A record as the walk returns it: the connector's record plus the source it came from (ids are per source). */
export type WalkedRecord = SourceRecord & { readonly source: string }

/** The envelope of a walk without its items: every completeness field, and `page.returned` items streamed. */
export type WalkSummary = Omit<Envelope<WalkedRecord>, 'items'>

export const DEFAULT_PAGE_SIZE = 100
/** The longest continuation cursor a search request takes back: a walk never hands out a longer one. */
export const MAX_CURSOR_CHARS = 16_384
export const MAX_PAGE_SIZE = 10_000
export const DEFAULT_BUDGET: Required<Budget> = { maxPages: 1000, maxItems: 100_000, deadlineMs: 30_000 }

/**
 * The CLI's exit statuses, documented in the README. A script tells a partial answer from a whole one by the
 * status alone: 5 is never used for a complete result, 0 never for an incomplete one.
 */
export const EXIT = {
  /** Done, and the answer is whole: a complete result, an operation whose every target succeeded. */
  ok: 0,
  /** A bug in Warrant: the message says so. */
  internal: 1,
  /** Your input: a bad option, filter, id, cursor or config. Nothing was changed. */
  input: 2,
  /** Refused by policy (not approved, digest mismatch, expired, forbidden), or an operation that finished without every target succeeding. */
  refused: 3,
  /** An upstream or the store could not be reached. */
  upstream: 4,
  /** The answer is incomplete: a partial search or selection, a plan on one (never approvable), one page of several, or an operation still running when the wait ended. */
  incomplete: 5,
  /** `audit verify`: every row verifies but breaks an operator acknowledged (`warrant audit acknowledge`), each listed. Never 0 again for that chain. */
  acknowledged: 6,
} as const

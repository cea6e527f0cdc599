/**
 * One guarantee Warrant gives about a resource, as a probe found it.
 *
 * - `holds`: seen to hold on what the probe read.
 * - `warning`: holds, at a cost or with a caveat the operator should know: Warrant checks at run time what the
 *   upstream does not prove, and fails closed where that check fails (an id column no key proves unique).
 *   Does not lower the verdict.
 * - `fails_closed`: does not hold, and Warrant says so where it matters (answers come back not complete,
 *   writes are refused or halt): the config or the upstream needs fixing, but nothing false is claimed.
 * - `unsafe`: does not hold, and nothing downstream catches it: a false `complete` or a destructive write is
 *   possible with this configuration.
 * - `unknown`: the probe could not tell (the upstream did not answer, or too little data to judge).
 * - `not_applicable`: does not apply to this resource (no actions, no declared total…).
 */
export type GuaranteeStatus = 'holds' | 'warning' | 'fails_closed' | 'unsafe' | 'unknown' | 'not_applicable'

export interface Guarantee {
  /** A stable name, e.g. `declared_fields`. */
  readonly name: string
  /** What the guarantee promises, in words. */
  readonly promise: string
  readonly status: GuaranteeStatus
  /** What the probe saw. */
  readonly detail: string
  /** The config lines that break it, as dotted keys under the resource (`connector.field_paths.status`). */
  readonly config_keys: readonly string[]
  /** The source it was seen on, where it is one source's (a write probe: each source is its own upstream). */
  readonly source?: string
  /** The record a write probe wrote to on `source` (given, or the first its first page listed). */
  readonly record_id?: string
}

/** The probe's findings for one resource. */
export interface CheckReport {
  readonly resource: string
  readonly connector: 'sql' | 'http'
  readonly guarantees: readonly Guarantee[]
  /** The worst status: `unsafe` over `fails_closed` over `unknown` over `holds` (a `warning` holds). */
  readonly verdict: 'holds' | 'fails_closed' | 'unsafe' | 'unknown'
}

const RANK: Record<GuaranteeStatus, number> = { not_applicable: 0, holds: 0, warning: 0, unknown: 1, fails_closed: 2, unsafe: 3 }

/** The worst status among the guarantees. */
export function verdictOf(guarantees: readonly Guarantee[]): CheckReport['verdict'] {
  let worst: CheckReport['verdict'] = 'holds'
  for (const g of guarantees) if (RANK[g.status] > RANK[worst]) worst = g.status as CheckReport['verdict']
  return worst
}

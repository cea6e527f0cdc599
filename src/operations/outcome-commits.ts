/** Outcomes an executor has handed to the ledger and not yet seen committed. */
export interface OutcomeCommits {
  /** Follows one outcome's commit; the first that fails is kept, and `onFailure` is called. */
  track(committed: Promise<unknown>): void
  /** Resolves once every outcome tracked so far (and any tracked meanwhile) has committed or failed. */
  settled(): Promise<void>
  /** The first commit that failed, if any. */
  failure(): { readonly error: unknown } | null
}

/**
 * A worker moves on to its next target while its last outcome commits; the run must still end only once every
 * outcome is in the ledger, and the first store failure must stop it (`onFailure`).
 *
 * @example
 * const commits = trackOutcomeCommits(() => abort.abort())
 * commits.track(recordOutcome(db, operationId, ord, outcome, now))
 * await commits.settled()
 * if (commits.failure()) throw commits.failure()!.error
 */
export function trackOutcomeCommits(onFailure: () => void): OutcomeCommits {
  const committing = new Set<Promise<unknown>>()
  let failure: { error: unknown } | null = null
  return {
    track(committed) {
      const tracked = committed.then(
        () => undefined,
        (error: unknown) => {
          failure ??= { error }
          onFailure()
        },
      )
      committing.add(tracked)
      void tracked.finally(() => committing.delete(tracked))
    },
    async settled() {
      while (committing.size > 0) await Promise.all([...committing])
    },
    failure: () => failure,
  }
}

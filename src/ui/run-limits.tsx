import type { PlanView } from '../plans/index.js'
import { count, plural } from './format.js'

/**
 * How hard the run may push and when it stops: the stop rules and pacing the plan binds, which its operation runs under
 * exactly. Shown beside the effect because they are part of what an approval covers: a run of 500 at once that halts
 * only after 500 errors in a row is another change to approve than one of 4 that halts after 5.
 */
export function RunLimitsSection(props: { plan: PlanView }) {
  const limits = props.plan.run_limits
  return (
    <>
      <h3>How hard the run may push</h3>
      {limits === null ? (
        <p data-testid="run-limits">
          Not bound to this plan: it was proposed before plans kept their stop rules and pacing, so it runs under the gateway's <code>execution</code> settings
          at the commit, whatever they are then. Reject it and have it proposed again to review them.
        </p>
      ) : (
        <p data-testid="run-limits">
          At most <strong>{count(limits.concurrency)} at once</strong>
          {limits.max_writes_per_second === null ? ' (no rate bound beyond that)' : <>, at most <strong>{String(limits.max_writes_per_second)} writes per second</strong></>}, read in
          batches of {count(limits.batch_size)}. It halts after <strong>{plural(limits.halt_after_consecutive_errors, 'target')} in a row</strong> that fail or end
          unknown, after <strong>{plural(limits.halt_after_validation_failures, 'validation refusal')}</strong> in all, and on an upstream asking to pause longer
          than <strong>{count(limits.max_retry_after_seconds)} s</strong> (a 429's Retry-After). These are bound to this plan: once the gateway's{' '}
          <code>execution</code> settings differ, it can no longer be approved or committed.
        </p>
      )}
    </>
  )
}

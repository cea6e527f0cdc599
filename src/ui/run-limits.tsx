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
          <WriteWindow window={limits.write_window} />
          {limits.max_writes_per_second === null ? ' (no rate bound beyond that)' : <>, at most <strong>{String(limits.max_writes_per_second)} writes per second</strong></>}, read in
          batches of {count(limits.batch_size)}. It halts after <strong>{plural(limits.halt_after_consecutive_errors, 'target')} in a row</strong> that fail or end
          unknown, after <strong>{plural(limits.halt_after_validation_failures, 'validation refusal')}</strong> in all, and on an upstream asking to pause longer
          than <strong>{count(limits.max_retry_after_seconds)} s</strong> (a 429's Retry-After). These are bound to this plan: once the gateway's{' '}
          <code>execution</code> settings (or the resource's <code>write_window</code>) differ, it can no longer be approved or committed.
        </p>
      )}
    </>
  )
}

/**
 * A sql resource writes a window of targets as one UPDATE: that many are in flight, whatever the concurrency says, so
 * the reviewer sees the size the plan binds (none for an http resource, or a plan proposed before plans bound it).
 */
function WriteWindow(props: { window: number | null | undefined }) {
  if (props.window === undefined) return null
  if (props.window === null) return <> (a sql UPDATE writes that many targets per statement)</>
  return (
    <>
      {' '}
      (a sql UPDATE writes up to <strong>{count(props.window)} targets per statement</strong>, so that many in flight: the resource's <code>write_window</code>)
    </>
  )
}

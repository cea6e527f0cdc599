import { isApproverReason, notCountedWords, planInActionScope } from '../../plans/index.js'
import { CsrfField, Notice, Pill, When, paths } from '../components.js'
import { plural, relative } from '../format.js'
import { revealed } from '../reveal.js'
import type { PlanPageData } from './plan.js'

/** Why this viewer cannot approve this plan now, in words; empty when the Approve button is offered. */
function blockers(d: PlanPageData): { code: string; text: string }[] {
  const { plan, selection, viewer } = d
  const out: { code: string; text: string }[] = []
  if (!selection.complete)
    out.push({
      code: 'selection_incomplete',
      text: 'The selection is incomplete: the inventory did not cover the whole scope (see 5). An incomplete selection can be reviewed, never approved or committed; the plan can still be rejected.',
    })
  // The plan service refuses a decision outside the reviewer's action scope; the page says so instead of offering it.
  if (!planInActionScope(viewer.actor, plan))
    out.push({ code: 'forbidden', text: `Your token's scope does not include the action "${plan.action.type}" on "${plan.resource}": you can read this plan, not decide on it.` })
  if (plan.state === 'expired' || selection.state === 'expired')
    out.push({
      code: 'expired',
      text: `The selection expired ${relative(selection.expires_at, d.viewer.now)} (${selection.expires_at}); the plan died with it. The agent must create a new selection and propose the action again.`,
    })
  out.push(...d.configChanged)
  if (selection.digest !== plan.selection_digest)
    out.push({ code: 'digest_mismatch', text: 'The selection no longer has the digest this plan was made on: the reviewed set changed. The plan cannot be approved.' })
  if (plan.state === 'rejected') out.push({ code: 'rejected', text: 'This plan was rejected; it takes no more decisions, and proposing the same action on this selection gives this plan again. To try again, the agent creates a new selection and proposes on it.' })
  if (plan.state === 'committed') out.push({ code: 'committed', text: 'This plan was committed; see the operation below.' })
  if (plan.state === 'approved' && plan.config_drift.length === 0) out.push({ code: 'approved', text: 'This plan is approved: no more approval is needed. The agent may commit it until the approval expires.' })
  if (plan.proposed_by === viewer.actor.principal) out.push({ code: 'proposer', text: 'You proposed this plan: another reviewer must decide on it.' })
  if (plan.state === 'pending' && plan.approval_state.approved_by.some((a) => a.principal === viewer.actor.principal))
    out.push({ code: 'already_approved', text: `You have approved this plan; ${plural(plan.approval_state.still_needed, 'more distinct reviewer')} must approve it.` })
  return out
}

/** The decision: who has approved, what still counts, and the form when this viewer may decide. */
export function DecisionSection(props: { d: PlanPageData }) {
  const d = props.d
  const p = d.plan
  const why = blockers(d)
  const canApprove = why.length === 0 && p.state === 'pending'
  const open = d.selection.state !== 'expired' && d.selection.digest === p.selection_digest && p.proposed_by !== d.viewer.actor.principal && planInActionScope(d.viewer.actor, p)
  // Rejecting an approved plan withdraws the approval before a commit; a plan on an incomplete selection can be rejected, never approved.
  // So can a pending plan the config no longer lets run: nobody can approve it into a commit, and a rejection ends it.
  const canReject = open && ((p.state === 'approved' && d.selection.complete) || (p.state === 'pending' && (!d.selection.complete || d.configChanged.length > 0)))
  const s = p.approval_state
  const withdrawn = p.approvals.filter((a) => isApproverReason(a.not_counted))
  return (
    <section class="decision" aria-labelledby="decision">
      <h2 id="decision">Decision</h2>
      <p>
        State: <Pill state={p.state} testid="plan-state" /> · Policy: {p.approval.reason}.
      </p>
      <p data-testid="approvals-needed">
        {p.approval.reviewers_needed === 0
          ? s.who_can_approve
          : `${plural(s.approved_by.length, 'valid approval')} of ${p.approval.reviewers_needed} needed${s.still_needed > 0 ? `: ${plural(s.still_needed, 'more distinct reviewer')} still needed (${s.who_can_approve})` : ''}.`}
      </p>
      {s.expired && s.expired_at ? (
        // The plan still reads "pending" (it can be approved again), so a reviewer must be told why an approved plan is
        // back: otherwise the page looks like nobody ever decided.
        <Notice kind="warn" title="The approval expired" testid="approval-expired">
          Enough reviewers approved this plan, but the approval lapsed at <When iso={s.expired_at} relativeTo={props.d.viewer.now} />: the agent can no longer commit it. A
          reviewer must approve it again.
        </Notice>
      ) : null}
      {s.approved_by.length > 0 ? (
        <ul class="clauses" data-testid="approved-by">
          {s.approved_by.map((a) => (
            <li>
              Approved by <strong>{revealed(a.name ?? a.principal)}</strong> at <When iso={a.approved_at} />; valid until <When iso={a.expires_at} relativeTo={props.d.viewer.now} />
            </li>
          ))}
        </ul>
      ) : null}
      {s.rejected_by ? (
        <p>
          Rejected by <strong>{revealed(s.rejected_by.name ?? s.rejected_by.principal)}</strong> at <When iso={s.rejected_by.decided_at} />
          {s.rejected_by.comment ? `: “${revealed(s.rejected_by.comment)}”` : ''}
        </p>
      ) : null}
      {withdrawn.length > 0 ? (
        // An approval withdrawn with its approver's authority (a revoked token, a disabled reviewer) is said where the
        // count is: read as "0 valid approvals" alone, it looked as if nobody had approved, and the reviewer who had
        // approved was simply asked again.
        <Notice kind="warn" title="An approval no longer counts" testid="not-counted">
          <ul class="clauses">
            {withdrawn.map((a) => (
              <li>
                The approval by <strong>{revealed(a.name ?? a.principal)}</strong> at <When iso={a.decided_at} /> no longer counts: {notCountedWords(a.not_counted!)} ({a.not_counted}).
              </li>
            ))}
          </ul>
        </Notice>
      ) : null}
      {p.approvals.some((a) => !a.valid && !isApproverReason(a.not_counted)) ? (
        <details>
          <summary>Earlier decisions that no longer count</summary>
          <ul class="clauses">
            {p.approvals
              .filter((a) => !a.valid && !isApproverReason(a.not_counted))
              .map((a) => (
                <li>
                  {a.decision} by {revealed(a.name ?? a.principal)} at <When iso={a.decided_at} />
                  {a.expires_at ? <> (lapsed <When iso={a.expires_at} />)</> : null}
                </li>
              ))}
          </ul>
        </details>
      ) : null}
      {canApprove || canReject ? (
        <form method="post" action={paths.decision(p.plan_id)} data-testid="decision-form">
          <CsrfField viewer={d.viewer} />
          <input type="hidden" name="plan_digest" value={p.plan_digest} />
          <p class="small">
            Your decision is bound to plan digest <code class="digest" title={p.plan_digest}>{p.plan_digest}</code>: this exact manifest of {plural(p.target_count, 'record')},
            this action, in <strong>{revealed(p.environment)}</strong>. An approval lasts {p.approval.ttl_minutes} minutes, never past the selection's expiry.
          </p>
          <label for="comment">Comment (optional, recorded with your decision)</label>
          <textarea id="comment" name="comment" maxlength={4000}></textarea>
          <div class="actions">
            {canApprove ? (
              <button type="submit" name="decision" value="approve" class="approve" data-testid="approve">
                Approve {p.action.type} on {plural(p.target_count, 'record')} in {revealed(p.environment)}
              </button>
            ) : null}
            <button type="submit" name="decision" value="reject" class="reject" data-testid="reject">
              {p.state === 'approved' ? 'Reject (withdraw the approval before a commit)' : 'Reject'}
            </button>
          </div>
        </form>
      ) : null}
      {why.length > 0 ? (
        <div data-testid="cannot-approve">
          {why.map((w) => (
            <Notice kind={['approved', 'committed', 'already_approved', 'proposer'].includes(w.code) ? 'info' : 'error'}>
              <p>
                {['approved', 'committed', 'rejected', 'already_approved', 'proposer'].includes(w.code) ? '' : 'Cannot be approved: '}
                {w.text} <code>{w.code}</code>
              </p>
            </Notice>
          ))}
        </div>
      ) : null}
    </section>
  )
}

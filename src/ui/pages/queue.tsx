import type { PlanView } from '../../plans/index.js'
import { DataTable, Layout, Notice, Pill, type Reach, type Viewer, When, Who, paths } from '../components.js'
import { count, looksLikeProduction, plural, relative } from '../format.js'
import { revealed } from '../reveal.js'

/**
 * The deadlines a reviewer acts against, each in words: the plan dies with its selection (so it can be reviewed
 * until then), an approval given now lasts the approval TTL but never past the selection, and an approval already
 * given lapses on its own (the plan then needs it again). The selection's expiry alone read as the time an
 * approval would let the agent commit, which the TTL cuts short.
 */
function deadlinesOf(plan: PlanView, now: number): { reviewable: string; notes: string[] } {
  const left = (iso: string) => relative(iso, now).replace(/^in /, '')
  const selection = plan.selection.expires_at
  const notes: string[] = []
  // an incomplete selection takes no approval (the evidence column says so): no approval deadline to give
  if (plan.selection.complete) {
    const ttlEnd = new Date(now + plan.approval.ttl_minutes * 60_000).toISOString()
    notes.push(ttlEnd < selection ? `an approval given now lasts ${left(ttlEnd)}` : `an approval given now lasts ${left(selection)} (until the selection expires)`)
  }
  const given = plan.approval_state.approved_by.map((a) => a.expires_at).filter((x): x is string => x !== null).sort()
  if (given.length > 0) notes.push(`${given.length === 1 ? 'the approval given' : 'the first approval given'} lapses in ${left(given[0]!)}`)
  return { reviewable: `reviewable for ${left(selection)}`, notes }
}

/**
 * The environment cell: bold, and said to be production, when the label reads like production or a host the
 * connector reaches does, as the plan page's banner judges it. By the label alone, a plan labelled staging whose
 * connector reached api.prod… sat in the queue in plain text while its own page was red.
 */
function EnvironmentCell(props: { environment: string; reach: Reach }) {
  const byHost = props.reach.hosts.filter(looksLikeProduction)
  if (!looksLikeProduction(props.environment) && byHost.length === 0) return <>{revealed(props.environment)}</>
  return (
    <>
      <strong>{revealed(props.environment)}</strong>{' '}
      <span class="small">{byHost.length > 0 ? `(production: the connector reaches ${byHost.map(revealed).join(', ')})` : '(production)'}</span>
    </>
  )
}

export function QueuePage(d: {
  viewer: Viewer
  waiting: readonly PlanView[]
  more: boolean
  /** the next older plans waiting, where more exist */
  olderLink: string | null
  /** this listing goes on from an earlier one (`older`): the newest are on the queue's first page */
  continued: boolean
  recent: readonly PlanView[]
  reach: (resource: string) => Reach
}) {
  return (
    <Layout title="Plans waiting for a decision" viewer={d.viewer}>
      <h1>Plans waiting for a decision</h1>
      <p class="muted">
        Newest first. Each plan binds one frozen selection, one action and one environment; open it to see the whole manifest, the change and what is
        missing before you decide.
      </p>
      {d.waiting.length === 0 ? (
        d.continued ? (
          <Notice kind="info" title="No older plan is waiting." testid="queue-empty">
            <p>No plan in your scope older than those on the queue's first page waits for a decision.</p>
          </Notice>
        ) : (
          <Notice kind="ok" title="Nothing is waiting for you." testid="queue-empty">
            <p>No plan in your scope waits for a decision.</p>
          </Notice>
        )
      ) : (
        <DataTable
          label="Plans waiting for a decision"
          testid="queue"
          caption={`${plural(d.waiting.length, 'plan')} waiting${d.continued ? ', older than those on the first page' : ''}${d.more ? ' (more exist: the oldest are not listed here; the link below the table lists them)' : ''}`}
          columns={['Plan', 'Environment', 'Resource', 'Action', { num: 'Targets' }, 'Evidence', 'Proposed by', 'Approvals', 'Deadlines']}
        >
          {d.waiting.map((p) => {
            const deadlines = deadlinesOf(p, d.viewer.now)
            return (
              <tr data-plan-id={p.plan_id}>
                <th scope="row">
                  <a href={paths.plan(p.plan_id)}>
                    {p.compensates ? 'Compensation: ' : ''}
                    {p.action.type} on {plural(p.target_count, 'record')}
                  </a>
                  <div class="small muted">
                    <code>{p.plan_id}</code>, <When iso={p.created_at} />
                  </div>
                </th>
                <td>
                  <EnvironmentCell environment={p.environment} reach={d.reach(p.resource)} />
                </td>
                <td>
                  <code>{p.resource}</code>
                </td>
                <td>
                  <code>{p.action.type}</code>
                </td>
                <td class="num">{count(p.target_count)}</td>
                <td>{p.selection.complete ? 'complete' : <strong>incomplete: cannot be approved</strong>}</td>
                <td>
                  <Who viewer={d.viewer} principal={p.proposed_by} />
                </td>
                <td>
                  {count(p.approval_state.approved_by.length)} of {count(p.approval.reviewers_needed)}
                </td>
                <td>
                  {deadlines.reviewable} <span class="small muted">(then the selection expires, and the plan with it)</span>
                  {deadlines.notes.map((note) => (
                    <div class="small">{note}</div>
                  ))}
                </td>
              </tr>
            )
          })}
        </DataTable>
      )}
      {d.olderLink ? (
        <p>
          <a href={d.olderLink} rel="next" data-testid="queue-older">
            Older plans waiting for a decision
          </a>{' '}
          <span class="muted small">(the next page of the queue, from the oldest listed above)</span>
        </p>
      ) : null}
      {d.continued ? (
        <p class="small">
          <a href={paths.queue}>Back to the newest plans waiting</a>
        </p>
      ) : null}
      {d.recent.length > 0 ? (
        <>
          <h2>Recently decided</h2>
          <DataTable label="Recently decided plans" testid="recent" columns={['Plan', 'State', 'Environment', 'Action', { num: 'Targets' }, 'Proposed']}>
            {d.recent.map((p) => (
              <tr>
                <th scope="row">
                  <a href={paths.plan(p.plan_id)}>{p.plan_id}</a>
                </th>
                <td>
                  <Pill state={p.state} />
                </td>
                <td>
                  <EnvironmentCell environment={p.environment} reach={d.reach(p.resource)} />
                </td>
                <td>
                  <code>{p.action.type}</code>
                </td>
                <td class="num">{count(p.target_count)}</td>
                <td>
                  <When iso={p.created_at} />
                </td>
              </tr>
            ))}
          </DataTable>
        </>
      ) : null}
    </Layout>
  )
}

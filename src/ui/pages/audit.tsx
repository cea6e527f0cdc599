import type { AuditEntry } from '../../audit/index.js'
import type { OperationView } from '../../operations/index.js'
import type { PlanView } from '../../plans/index.js'
import { EnvBanner, Layout, Notice, TableScroll, type Viewer, When, Who, paths } from '../components.js'
import { count, plural, shortDigest } from '../format.js'

export interface AuditPageData {
  readonly viewer: Viewer
  readonly plan: PlanView
  readonly operations: readonly OperationView[]
  /** Run level: the selection's, the plan's and the operations' events, in chain order. */
  readonly runEvents: readonly AuditEntry[]
  readonly runTruncated: boolean
  /** Call level: one operation's upstream calls, one page. */
  readonly calls: { readonly operationId: string; readonly events: readonly AuditEntry[]; readonly next: string | null; readonly first: string | null } | null
}

const record = (value: unknown): Record<string, unknown> => (value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {})

/** Who acted, from the event's principal and the actor the log recorded with it. */
function Actor(props: { viewer: Viewer; event: AuditEntry }) {
  const actor = record(record(props.event.details).actor)
  if (!props.event.principal) return <span class="muted">gateway ({props.event.surface})</span>
  return (
    <>
      <Who viewer={props.viewer} principal={props.event.principal} />
      {typeof actor.role === 'string' ? <span class="small muted"> {actor.role}</span> : null}
    </>
  )
}

/** The event's summary and decision, briefly. */
function What(props: { event: AuditEntry }) {
  const summary = record(props.event.summary)
  const details = record(props.event.details)
  const parts: string[] = []
  if (typeof details.decision === 'string') parts.push(`decision: ${details.decision}`)
  if (typeof details.comment === 'string' && details.comment) parts.push(`comment: “${details.comment}”`)
  if (typeof summary.status === 'number') parts.push(`HTTP ${summary.status}`)
  if (typeof summary.error === 'string') parts.push(`refused: ${summary.error}`)
  if (typeof summary.state === 'string') parts.push(`state: ${summary.state}`)
  if (summary.counts && typeof summary.counts === 'object')
    parts.push(
      Object.entries(summary.counts as Record<string, number>)
        .filter(([, n]) => n > 0)
        .map(([k, n]) => `${k} ${count(n)}`)
        .join(', '),
    )
  const halt = record(summary.halt_reason)
  if (typeof halt.rule === 'string') parts.push(`halted: ${halt.rule}`)
  return (
    <>
      {parts.filter(Boolean).join(' · ') || <span class="muted">—</span>}
      <details>
        <summary class="small">Recorded summary</summary>
        <code class="small">{JSON.stringify(props.event.summary)}</code>
      </details>
    </>
  )
}

export function AuditPage(d: AuditPageData) {
  const p = d.plan
  return (
    <Layout title={`Audit trail of ${p.plan_id}`} viewer={d.viewer}>
      <EnvBanner environment={p.environment} resource={p.resource} what={<>action <code>{p.action.type}</code> on {plural(p.target_count, 'record')}</>} />
      <h1>
        Audit trail of plan <a href={paths.plan(p.plan_id)}>{p.plan_id}</a>
      </h1>
      <p>
        Two levels, one hash chain: the <a href="#run">run level</a> says who asked and who approved, on which surface; the <a href="#calls">call level</a>{' '}
        lists every upstream call an operation made, with its endpoint, status and outcome. Rows show their sequence number and hash.
      </p>
      <section aria-labelledby="run">
        <h2 id="run">Run level: who asked, who approved</h2>
        {d.runTruncated ? <Notice kind="warn" title="Only the first events of each kind are listed." /> : null}
        <TableScroll label="Run-level events">
          <table data-testid="run-events">
            <thead>
              <tr>
                <th scope="col" class="num">
                  Seq
                </th>
                <th scope="col">When</th>
                <th scope="col">Who</th>
                <th scope="col">Surface</th>
                <th scope="col">Action</th>
                <th scope="col">What</th>
                <th scope="col">Hash</th>
              </tr>
            </thead>
            <tbody>
              {d.runEvents.map((e) => (
                <tr>
                  <td class="num">{count(e.seq)}</td>
                  <td>
                    <When iso={e.at} />
                  </td>
                  <td>
                    <Actor viewer={d.viewer} event={e} />
                  </td>
                  <td>{e.surface}</td>
                  <th scope="row">
                    <code>{e.action}</code>
                  </th>
                  <td>
                    <What event={e} />
                  </td>
                  <td>
                    <code class="small" title={e.hash}>
                      {shortDigest(e.hash)}
                    </code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      </section>
      <section aria-labelledby="calls">
        <h2 id="calls">Call level: every upstream call</h2>
        {d.operations.length === 0 ? (
          <p>The plan has no operation yet: nothing was written upstream for it.</p>
        ) : (
          <>
            <nav aria-label="Operations">
              <ul class="filters">
                {d.operations.map((o) => (
                  <li>
                    <a href={`${paths.planAudit(p.plan_id)}?operation=${encodeURIComponent(o.operation_id)}#calls`} aria-current={d.calls?.operationId === o.operation_id ? 'page' : undefined}>
                      {o.operation_id}
                    </a>{' '}
                    <span class="small muted">({o.state})</span>
                  </li>
                ))}
              </ul>
            </nav>
            {d.calls ? (
              <>
                <div class="pager">
                  {d.calls.first ? <a href={d.calls.first}>First page</a> : null}
                  {d.calls.next ? (
                    <a href={d.calls.next} rel="next">
                      Next page
                    </a>
                  ) : (
                    <span class="muted">Last page</span>
                  )}
                  <a href={paths.operation(d.calls.operationId)}>Operation page</a>
                </div>
                <TableScroll label="Upstream calls">
                  <table data-testid="call-events">
                    <thead>
                      <tr>
                        <th scope="col" class="num">
                          Seq
                        </th>
                        <th scope="col">When</th>
                        <th scope="col">Call</th>
                        <th scope="col">Record</th>
                        <th scope="col" class="num">
                          Status
                        </th>
                        <th scope="col">Outcome</th>
                        <th scope="col">Hash</th>
                      </tr>
                    </thead>
                    <tbody>
                      {d.calls.events.map((e) => {
                        const s = record(e.summary)
                        return (
                          <tr>
                            <td class="num">{count(e.seq)}</td>
                            <td>
                              <When iso={e.at} />
                            </td>
                            <th scope="row">
                              <code>{e.action}</code>
                              {typeof s.source === 'string' ? <div class="small muted">{s.source}</div> : null}
                            </th>
                            <td>{e.target_id ? <code>{e.target_id}</code> : <span class="muted">—</span>}</td>
                            <td class="num">{typeof s.status === 'number' ? s.status : <span class="empty">none</span>}</td>
                            <td>{typeof s.outcome === 'string' ? s.outcome : '—'}</td>
                            <td>
                              <code class="small" title={e.hash}>
                                {shortDigest(e.hash)}
                              </code>
                            </td>
                          </tr>
                        )
                      })}
                    </tbody>
                  </table>
                </TableScroll>
              </>
            ) : null}
          </>
        )}
      </section>
    </Layout>
  )
}

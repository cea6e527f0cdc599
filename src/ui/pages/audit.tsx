import type { AuditEntry, ListedAuditEntry } from '../../audit/index.js'
import type { OperationView } from '../../operations/index.js'
import type { PlanView } from '../../plans/index.js'
import type { Child } from 'hono/jsx'
import { type Column, DataTable, EnvBanner, Layout, type Reach, Notice, PageLinks, RecordId, type Viewer, When, Who, paths } from '../components.js'
import { count, plural, shortDigest } from '../format.js'
import { revealed } from '../reveal.js'

export interface AuditPageData {
  readonly viewer: Viewer
  readonly plan: PlanView
  /** The hosts the connector reaches, and a label naming another. */
  readonly reach: Reach
  readonly operations: readonly OperationView[]
  /** Run level: the selection's, the plan's and the operations' events, in chain order. */
  readonly runEvents: readonly ListedAuditEntry[]
  readonly runTruncated: boolean
  /** successful reads the run-level rows leave out (the operation page lists them); `exact: false` when summed over listings that may overlap */
  readonly readsLeftOut: { readonly count: number; readonly exact: boolean }
  /** Call level: one operation's upstream calls, one page. */
  readonly calls: { readonly operationId: string; readonly events: readonly AuditEntry[]; readonly next: string | null; readonly first: string | null } | null
}

const record = (value: unknown): Record<string, unknown> => (value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {})

/** Who acted, from the event's principal and the actor the log recorded with it. */
export function Actor(props: { viewer: Viewer; event: AuditEntry }) {
  const actor = record(record(props.event.details).actor)
  if (!props.event.principal) return <span class="muted">gateway ({revealed(props.event.surface)})</span>
  return (
    <>
      <Who viewer={props.viewer} principal={props.event.principal} />
      {typeof actor.role === 'string' ? <span class="small muted"> {revealed(actor.role)}</span> : null}
    </>
  )
}

/** The event's summary and decision, briefly. */
export function What(props: { event: AuditEntry }) {
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
  // Comments, refusals and counts' names come from people and upstreams: revealed like every value on these pages.
  return (
    <>
      {/* wrapped anywhere: a comment of one long word would widen the table past its other columns */}
      {parts.filter(Boolean).length > 0 ? <span class="long">{parts.filter(Boolean).map(revealed).join(' · ')}</span> : <span class="muted">—</span>}
      <details>
        <summary class="small">Recorded summary</summary>
        <code class="small long">{revealed(JSON.stringify(props.event.summary))}</code>
      </details>
    </>
  )
}

/** Every listing of rows says it checks nothing: the chain is verified as a whole, by the command named (see UNVERIFIED_LISTING). */
export function UnverifiedNotice(props: { testid?: string }) {
  return (
    <Notice kind="info" title="Listed as stored, not verified." testid={props.testid ?? 'unverified'}>
      <p>
        These rows are shown as the store holds them, not checked against the hash chain: a row altered, removed or inserted in the store is shown as it now
        reads. <code>warrant audit verify</code> checks the whole chain and names the first bad row.
      </p>
    </Notice>
  )
}

/** A row listed by an id its request named and was refused for: the request's claim, never that object's event. */
export function RefusedClaim(props: { named: string }) {
  return <div class="small">refused claim: the request was refused; it named {props.named}</div>
}

/** Both levels are slices of one hash chain, so both tables lead with its order and end with the link that seals it. */
export function ChainTable(props: { label: string; testid: string; columns: readonly Column[]; children?: Child }) {
  return (
    <DataTable label={props.label} testid={props.testid} columns={[{ num: 'Seq' }, 'When', ...props.columns, 'Hash']}>
      {props.children}
    </DataTable>
  )
}

export function ChainRow(props: { event: AuditEntry; children?: Child }) {
  const e = props.event
  return (
    <tr>
      <td class="num">{count(e.seq)}</td>
      <td>
        <When iso={e.at} />
      </td>
      {props.children}
      <td>
        <code class="small" title={e.hash}>
          {shortDigest(e.hash)}
        </code>
      </td>
    </tr>
  )
}

export function AuditPage(d: AuditPageData) {
  const p = d.plan
  return (
    <Layout title={`Audit trail of ${p.plan_id}`} viewer={d.viewer}>
      <EnvBanner environment={p.environment} resource={p.resource} reach={d.reach} what={<>action <code>{p.action.type}</code> on {plural(p.target_count, 'record')}</>} />
      <h1>
        Audit trail of plan <a href={paths.plan(p.plan_id)}>{p.plan_id}</a>
      </h1>
      <p>
        Two levels, one hash chain: the <a href="#run">run level</a> says who asked and who approved, on which surface; the <a href="#calls">call level</a>{' '}
        lists every upstream call an operation made, with its endpoint, status and outcome. Rows show their sequence number and hash.
      </p>
      <UnverifiedNotice />
      <section aria-labelledby="run">
        <h2 id="run">Run level: who asked, who approved</h2>
        {d.runTruncated ? <Notice kind="warn" title="Only the first events of each kind are listed." /> : null}
        {d.readsLeftOut.count > 0 ? (
          <p data-testid="plan-audit-reads">
            {d.readsLeftOut.exact ? '' : 'At most '}
            {plural(d.readsLeftOut.count, 'successful read')} of the selection, the plan or its operations left out of these rows: requests that only read and were
            answered. A refused request is always listed; each operation's page lists the reads too.
          </p>
        ) : null}
        <ChainTable label="Run-level events" testid="run-events" columns={['Who', 'Surface', 'Action', 'What']}>
          {d.runEvents.map((e) => (
            <ChainRow event={e}>
              <td>
                <Actor viewer={d.viewer} event={e} />
              </td>
              <td>{revealed(e.surface)}</td>
              <th scope="row">
                <code>{revealed(e.action)}</code>
                {/* listed here by the ids it named: a refused request's ids are its claim, not this plan's event */}
                {e.refused_claim ? <RefusedClaim named="this plan, its selection or operation, and is not their event" /> : null}
              </th>
              <td>
                <What event={e} />
              </td>
            </ChainRow>
          ))}
        </ChainTable>
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
                      {revealed(o.operation_id)}
                    </a>{' '}
                    <span class="small muted">({o.state})</span>
                  </li>
                ))}
              </ul>
            </nav>
            {d.calls ? (
              <>
                <div class="pager">
                  <PageLinks first={d.calls.first} next={d.calls.next} />
                  <a href={paths.operation(d.calls.operationId)}>Operation page</a>
                </div>
                <ChainTable label="Upstream calls" testid="call-events" columns={['Call', 'Record', { num: 'Status' }, 'Outcome']}>
                  {d.calls.events.map((e) => {
                    const s = record(e.summary)
                    return (
                      <ChainRow event={e}>
                        <th scope="row">
                          <code>{revealed(e.action)}</code>
                          {typeof s.source === 'string' ? <div class="small muted">{revealed(s.source)}</div> : null}
                        </th>
                        <td>{e.target_id ? <RecordId id={e.target_id} /> : <span class="muted">—</span>}</td>
                        <td class="num">{typeof s.status === 'number' ? s.status : <span class="empty">none</span>}</td>
                        <td>{typeof s.outcome === 'string' ? revealed(s.outcome) : '—'}</td>
                      </ChainRow>
                    )
                  })}
                </ChainTable>
              </>
            ) : null}
          </>
        )}
      </section>
    </Layout>
  )
}

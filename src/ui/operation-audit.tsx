import type { ListedAuditEntry, ReadsLeftOut } from '../audit/index.js'
import type { Viewer } from './components.js'
import { RecordId, paths } from './components.js'
import { count } from './format.js'
import { Actor, ChainRow, ChainTable, RefusedClaim, UnverifiedNotice, What } from './pages/audit.js'
import { revealed } from './reveal.js'

/** Rows the operation page lists at once: its latest steps, never the whole log of a large operation. */
export const OPERATION_AUDIT_ROWS = 50

export interface OperationAuditData {
  /** newest first, at most OPERATION_AUDIT_ROWS */
  readonly events: readonly ListedAuditEntry[]
  /** the next older rows, or null when these reach the operation's first row */
  readonly older: string | null
  /** back to the newest rows, or null when these are they */
  readonly newest: string | null
  /** whether the successful reads are listed; if not, how many this page left out; `toggle` is this page the other way */
  readonly reads: { readonly shown: true; readonly toggle: string } | { readonly shown: false; readonly left_out: ReadsLeftOut; readonly toggle: string }
}

/**
 * What the listing says of the reads: left out (how many, of which rows) with a link to list them, or listed with a
 * link to leave them out. The count is of this page's span, so a reviewer knows exactly what is not in front of them.
 */
function ReadsNote(props: { reads: OperationAuditData['reads'] }) {
  const r = props.reads
  if (r.shown)
    return (
      <p data-testid="operation-audit-reads">
        Successful reads of this operation are listed too.{' '}
        <a href={r.toggle} data-testid="operation-audit-hide-reads">
          Leave the reads out
        </a>
      </p>
    )
  const n = r.left_out.count
  return (
    <p data-testid="operation-audit-reads">
      {count(n)} successful {n === 1 ? 'read' : 'reads'} left out of this page: requests that only read and were answered (GETs of the API, this
      page's own status polls among them, MCP get_operation, warrant operation show), among the rows this page
      spans. A refused request is always listed.{' '}
      <a href={r.toggle} data-testid="operation-audit-show-reads">
        Show the reads too
      </a>
    </p>
  )
}

/** An upstream call's outcome as its row recorded it (`success`, `rate_limited`, …). */
function callOutcome(e: ListedAuditEntry): string | null {
  const s = e.summary
  return s && typeof s === 'object' && typeof (s as Record<string, unknown>).outcome === 'string' ? ((s as Record<string, unknown>).outcome as string) : null
}

/**
 * The operation's own audit rows (commit, start, each upstream call and write, halt, end; and the requests that named
 * it, its successful reads left out and counted unless asked for: every view of it is a row, and they would bury the
 * rows that acted), newest first: a reviewer sees from the operation what was done, without leaving it for the plan's trail.
 * Listed as stored, like every listing: it says it is not verified and marks a refused request's claim.
 */
export function OperationAudit(props: { viewer: Viewer; operationId: string; planId: string; audit: OperationAuditData }) {
  const a = props.audit
  const first = a.events[0]
  const last = a.events[a.events.length - 1]
  const range =
    !first || !last
      ? a.reads.shown || a.reads.left_out.count === 0
        ? 'No audit row names this operation.'
        : 'No audit row other than successful reads names this operation here.'
      : `${a.newest === null ? 'The newest' : 'Older:'} ${a.events.length === 1 ? 'row' : `${count(a.events.length)} rows`}, seq ${count(first.seq)} back to ${count(last.seq)}${a.older ? '; older rows on the next page' : ', back to its first row'}.`
  return (
    <section aria-labelledby="audit">
      <h2 id="audit">Audit rows of this operation</h2>
      <UnverifiedNotice testid="operation-audit-unverified" />
      <ReadsNote reads={a.reads} />
      <div class="pager">
        <span data-testid="operation-audit-range">{range}</span>
        {a.newest === null ? null : <a href={a.newest}>Newest rows</a>}
        {a.older ? (
          <a href={a.older} rel="next" data-testid="operation-audit-older">
            Older rows
          </a>
        ) : null}
        <a href={`${paths.planAudit(props.planId)}?operation=${encodeURIComponent(props.operationId)}#calls`}>Every upstream call, in order</a>
      </div>
      {a.events.length === 0 ? null : (
        <ChainTable label="Audit rows of this operation" testid="operation-audit" columns={['Level', 'Who', 'Action', 'What', 'Record']}>
          {a.events.map((e) => (
            <ChainRow event={e}>
              <td>{e.level}</td>
              <td>
                <Actor viewer={props.viewer} event={e} />
                <div class="small muted">{revealed(e.surface)}</div>
              </td>
              <th scope="row">
                <code>{revealed(e.action)}</code>
                {e.level === 'call' && typeof callOutcome(e) === 'string' ? <div class="small">outcome: {revealed(callOutcome(e)!)}</div> : null}
                {e.refused_claim ? <RefusedClaim named="this operation, and is not its event" /> : null}
              </th>
              <td>
                <What event={e} />
              </td>
              <td>{e.target_id ? <RecordId id={e.target_id} /> : <span class="muted">—</span>}</td>
            </ChainRow>
          ))}
        </ChainTable>
      )}
    </section>
  )
}

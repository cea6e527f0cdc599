import { askedAgainText, beforeLabel, FINISHED_STATES, waitWords, type OperationView, type ResultsPage, type TargetState } from '../../operations/index.js'
import type { FollowUp, FollowUps, PlanView } from '../../plans/index.js'
import { Change, CsrfField, DataTable, EnvBanner, type Flash, type Reach, FlashNotice, Layout, Notice, PageLinks, Pill, RecordId, Val, type Viewer, When, Who, paths } from '../components.js'
import { type FieldTypes, count, plural } from '../format.js'
import { revealed } from '../reveal.js'
import { type WriteConfig, restorabilityOf } from '../../config/index.js'
import { reversibleWords } from '../write-request.js'
import { OperationAudit, type OperationAuditData } from '../operation-audit.js'

type FollowUpKind = keyof FollowUps

/** The states after which an operation writes nothing more: the live counts stop polling, compensation opens. */
export const FINISHED: ReadonlySet<string> = FINISHED_STATES
export const OUTCOME_FILTERS: readonly TargetState[] = ['succeeded', 'failed', 'skipped', 'unknown', 'pending', 'in_flight']
const OUTCOME_WORDS: Record<string, string> = {
  succeeded: 'written, and the answer matched the approved change',
  failed: 'refused or errored upstream; not written',
  skipped: 'precondition or version changed since review; not written',
  unknown: 'no durable answer: it may have been written; never retried blindly',
  pending: 'not attempted (yet)',
}

/**
 * The pause as one sentence, the reason revealed: it quotes the upstream (a 503's body), so it may carry markup,
 * zero-width or bidi characters. The page and its live update both show this text (the script only sets it).
 */
export function pausedText(paused: OperationView['paused']): string {
  return paused ? `No write is sent before ${paused.until}. ${revealed(paused.reason)}` : ''
}

/**
 * The upstream's "not now" answers as one sentence, none included: why an operation was slower than its rate, and
 * that its targets were asked again. The page and its live update both show this text (the script only sets it).
 * In the operation's terms (`rate_limit_kind`, wait-words.ts): a sql resource's waits are the database's (a lock held
 * past its time limit, a deadlock, SQLite busy: the write rolled back and retried after a pause), never a 429 or a
 * Retry-After, which it was said to be.
 */
export function rateLimitedText(o: Pick<OperationView, 'rate_limit_hits' | 'rate_limited_targets' | 'state' | 'rate_limit_kind'>): string {
  const times = `${plural(o.rate_limit_hits, 'time')}, on ${plural(o.rate_limited_targets, 'target')}`
  switch (o.rate_limit_kind) {
    case 'database_lock':
      if (o.rate_limit_hits === 0) return `The database never held a lock past the time limit (${waitWords(o.rate_limit_kind).never}).`
      return `The database held a lock past the time limit (or ended a deadlock) ${times}: each such write was rolled back, nothing written, and retried after a pause; the target ${askedAgainText(o)}. Per target: “rate limited” below.`
    case 'http':
      if (o.rate_limit_hits === 0) return 'The upstream never asked to wait (no 429, no Retry-After).'
      return `The upstream asked to wait (429, or 503 with Retry-After) ${times}: each wait was honoured and the target ${askedAgainText(o)}. Per target: “rate limited” below.`
    default:
      if (o.rate_limit_hits === 0) return 'The upstream never said “not now”.'
      return `The upstream said “not now” ${times}: each was waited out and the target ${askedAgainText(o)}. Per target: “rate limited” below.`
  }
}

/** The pause notice's title, in the operation's terms (wait-words.ts). */
export function pausedTitle(o: Pick<OperationView, 'rate_limit_kind'>): string {
  const paused = waitWords(o.rate_limit_kind).paused
  return `Paused: ${paused}.`
}

export interface OperationPageData {
  readonly viewer: Viewer
  readonly operation: OperationView
  readonly plan: PlanView | null
  /** the request its records were written by (http): a compensation through a DELETE is never offered */
  readonly write: WriteConfig | null
  /** The hosts the connector reaches, and a label naming another. */
  readonly reach: Reach
  readonly results: ResultsPage
  readonly outcome: TargetState | null
  readonly base: string
  readonly paged: boolean
  readonly next: string | null
  /** The resource's declared field types: a number field may hold its exact digits as text. */
  readonly types: FieldTypes
  readonly notice?: Flash | null
  /** the operation's latest audit rows, one page */
  readonly audit: OperationAuditData
}

/** The fields whose value differs between before and after, in a stable order. */
function changedFields(before: Readonly<Record<string, unknown>> | null, after: Readonly<Record<string, unknown>> | null): string[] {
  const keys = new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})])
  return [...keys].sort()
}

/**
 * Which part of the targets the table shows: a page is 100 rows, so it names its rows and the total it is part of
 * (it read "Every target" over the first 100 of 605, and nothing else said the rest existed but a Next link).
 * Ordinals are manifest positions: under a filter they are not the rows' positions among the filtered targets.
 */
function targetsRange(d: OperationPageData): { range: string; caption: string } {
  const rows = d.results.results
  const first = rows[0]
  const last = rows[rows.length - 1]
  const whole = !d.paged && d.next === null
  const ended = d.outcome ? ` that ended ${d.outcome}` : ''
  let range: string
  if (!first || !last) range = `No target${ended}`
  else if (whole) range = rows.length === 1 ? `The one target${ended}` : `All ${count(rows.length)} targets${ended}`
  else if (d.outcome)
    range = `${count(rows.length)} of the ${plural(d.operation.counts[d.outcome], 'target')}${ended} (#${count(first.ord)}–#${count(last.ord)})`
  else range = `Targets ${count(first.ord)}–${count(last.ord)} of ${count(d.operation.target_count)}`
  return { range, caption: `${range}, in manifest order${d.next ? '; more on the next page' : ''}` }
}

/**
 * A follow-up plan already proposed from this operation (its rest, its compensation): where it is and its state, and
 * the operation it ran as once committed. Shown instead of the button, which would only answer the same plan.
 */
function Proposed(props: { what: string; kind: FollowUpKind; f: FollowUp }) {
  const { f } = props
  return (
    <p data-testid={`${props.kind}-proposed`}>
      {props.what} is proposed: plan{' '}
      <a href={paths.plan(f.plan_id)} data-testid={`${props.kind}-plan`}>
        {f.plan_id}
      </a>{' '}
      ({f.state})
      {f.operation_id ? (
        <>
          , run as operation <a href={paths.operation(f.operation_id)}>{f.operation_id}</a>
        </>
      ) : null}
      . {f.state === 'committed' ? 'It is not proposed again.' : 'It is reviewed on its page; proposing again answers the same plan.'}
    </p>
  )
}

/**
 * "Propose the rest" of a halted operation: offered only while targets never sent are pending and none may have been
 * written without a known answer (the service refuses the rest until those are reconciled, so the page says so
 * instead of offering a button that is refused). Nothing is shown otherwise.
 */
function Remainder(props: { d: OperationPageData }) {
  const { d } = props
  const o = d.operation
  if (o.state !== 'halted' || o.counts.pending === 0) return null
  const unsettled = o.counts.unknown + o.counts.in_flight
  return (
    <section aria-labelledby="remainder" data-testid="remainder">
      <h2 id="remainder">The rest</h2>
      {o.follow_ups.remainder ? (
        <Proposed what="The rest" kind="remainder" f={o.follow_ups.remainder} />
      ) : unsettled > 0 ? (
        <p>
          {plural(o.counts.pending, 'target')} {o.counts.pending === 1 ? 'was' : 'were'} never sent, but {plural(unsettled, 'target')} may have been written
          without a known answer (unknown). Reconcile {unsettled === 1 ? 'it' : 'them'} first (<code>warrant reconcile {o.operation_id}</code>, or{' '}
          <code>POST /v1/operations/{o.operation_id}/reconcile</code>), then propose the rest here.
        </p>
      ) : (
        <form method="post" action={paths.remainder(o.operation_id)}>
          {d.plan?.compensates ? (
            <p>
              This operation ran a compensation of operation <a href={paths.operation(d.plan.compensates)}>{d.plan.compensates}</a>. Proposes a new
              compensation of that operation over the {plural(o.counts.pending, 'pending target')} this one never sent, restoring the before-values it
              recorded (not read again), only where a record still holds what the operation wrote (each is read for the preview). It needs a new approval: the halted plan's
              approvals do not count, and you become its proposer, so another reviewer must approve it.
            </p>
          ) : (
            <p>
              Proposes a new plan of the same action, parameters and environment over the {plural(o.counts.pending, 'pending target')} this operation
              never sent, at the versions frozen with its selection (a record changed since is skipped or halts the run, never written blind). It needs a
              new approval: the halted plan's approvals do not count, and you become its proposer, so another reviewer must approve it.
            </p>
          )}
          <CsrfField viewer={d.viewer} />
          <button type="submit" data-testid="propose-remainder">
            Propose the rest ({plural(o.counts.pending, 'target')})
          </button>
        </form>
      )}
    </section>
  )
}

export function OperationPage(d: OperationPageData) {
  const o = d.operation
  const finished = FINISHED.has(o.state)
  const waiting = o.counts.pending + o.counts.in_flight
  const done = o.target_count - waiting
  const outcomeLink = (outcome: TargetState | null) => (outcome ? `${d.base}?outcome=${outcome}` : d.base)
  const shown = targetsRange(d)
  return (
    <Layout title={`Operation ${o.operation_id}`} viewer={d.viewer}>
      <EnvBanner
        environment={o.environment ?? '(unknown environment)'}
        resource={o.resource ?? '(unknown resource)'}
        reach={d.reach}
        label="Written in"
        what={
          <>
            action <code>{o.action?.type ?? '?'}</code> on {plural(o.target_count, 'record')}
          </>
        }
      />
      <FlashNotice flash={d.notice} />
      <h1>
        Operation <code>{o.operation_id}</code>
      </h1>
      <p>
        Commit of plan <a href={paths.plan(o.plan_id)}>{o.plan_id}</a> by <strong><Who viewer={d.viewer} principal={o.created_by} /></strong>, started{' '}
        <When iso={o.created_at} relativeTo={d.viewer.now} />
        {o.finished_at ? (
          <>
            , ended <When iso={o.finished_at} />
          </>
        ) : null}
        . <a href={paths.planAudit(o.plan_id)}>Audit trail</a>
      </p>
      <section
        aria-labelledby="outcomes"
        data-live-operation=""
        data-status-url={paths.operationStatus(o.operation_id)}
        data-finished={finished ? 'true' : 'false'}
      >
        <h2 id="outcomes">Outcomes</h2>
        <p>
          State: <span class={`pill ${o.state}`} data-state="" data-testid="operation-state">{o.state}</span>{' '}
          <span id="live-status" class="small muted" aria-live="polite">
            {finished ? '' : 'Updating every 2 seconds while it runs.'}
          </span>
        </p>
        <progress max={o.target_count} value={done} aria-label={`${count(done)} of ${count(o.target_count)} targets attempted`}></progress>
        <ul class="counts" aria-label="Targets per outcome" data-testid="counts">
          {(['succeeded', 'failed', 'skipped', 'unknown'] as const).map((k) => (
            <li class={k}>
              <span class="n" data-count={k} data-testid={`count-${k}`}>
                {count(o.counts[k])}
              </span>
              {k}
              <span class="small muted"> · {OUTCOME_WORDS[k]}</span>
            </li>
          ))}
          <li class="pending">
            <span class="n" data-count="waiting" data-testid="count-pending">
              {count(waiting)}
            </span>
            pending
            <span class="small muted"> · {OUTCOME_WORDS.pending}</span>
          </li>
        </ul>
        <p class="small" data-rate-limited="" data-testid="rate-limited">
          {rateLimitedText(o)}
        </p>
        {/* kept in the page while it runs, so the live update can show a pause that starts later, or clear one */}
        {finished ? null : (
          <div data-paused hidden={o.paused === null}>
            <Notice kind="warn" title={pausedTitle(o)} testid="paused">
              <p data-paused-text>{pausedText(o.paused)}</p>
            </Notice>
          </div>
        )}
        {o.halt_reason ? (
          <Notice kind="error" title={`Halted by the stop rule “${o.halt_reason.rule}”`} testid="halt-reason">
            <p>
              {revealed(o.halt_reason.message)}
              {o.halt_reason.target_id ? ` (at target ${revealed(o.halt_reason.target_id)}${o.halt_reason.ord !== null ? `, #${count(o.halt_reason.ord)}` : ''})` : ''}, <When iso={o.halt_reason.at} />.
              Later targets stay pending: nothing more is written.
            </p>
          </Notice>
        ) : null}
        {o.counts.unknown > 0 ? (
          <Notice kind="warn" title={`${plural(o.counts.unknown, 'target')} ended unknown.`}>
            <p>Unknown is not failed: the write may have happened. Re-read those records before anything is retried.</p>
          </Notice>
        ) : null}
      </section>
      <section aria-labelledby="targets">
        <h2 id="targets">Per target</h2>
        <nav aria-label="Filter by outcome">
          <ul class="filters">
            <li>
              <a href={outcomeLink(null)} aria-current={d.outcome === null ? 'page' : undefined}>
                All ({count(o.target_count)})
              </a>
            </li>
            {OUTCOME_FILTERS.map((k) => (
              <li>
                <a href={outcomeLink(k)} aria-current={d.outcome === k ? 'page' : undefined} data-testid={`filter-${k}`}>
                  {k} (<span data-filter-count={k}>{count(o.counts[k])}</span>)
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="pager">
          <span data-testid="targets-range">{shown.range}</span>
          <PageLinks first={d.paged ? outcomeLink(d.outcome) : null} next={d.next} />
        </div>
        {d.results.results.length === 0 ? (
          <p class="muted">No target {d.outcome ? `ended ${d.outcome}` : 'yet'}.</p>
        ) : (
          <DataTable
            label="Targets"
            testid="targets"
            caption={shown.caption}
            columns={[{ num: '#' }, 'Record', 'Outcome', { num: 'Upstream status' }, 'Reason or error', 'Before → after']}
          >
            {d.results.results.map((t) => (
              <tr class={t.outcome === 'failed' || t.outcome === 'unknown' ? 'failed' : ''}>
                <td class="num">{count(t.ord)}</td>
                <th scope="row">
                  <RecordId id={t.id} />
                </th>
                <td>
                  <Pill state={t.outcome} />
                  {t.attempts > 1 ? <span class="small muted"> {t.attempts} attempts</span> : null}
                  {t.rate_limit_hits > 0 ? (
                    <div class="small" data-testid="target-rate-limited">
                      rate limited {t.rate_limit_hits}×
                    </div>
                  ) : null}
                </td>
                <td class="num">{t.upstream_status ?? <span class="empty">none</span>}</td>
                <td>
                  {/* wrapped anywhere: an upstream's message of one long word would push the change out of sight */}
                  {t.error ? <span class="long">{revealed(t.error)}</span> : null}
                  {t.reason ? (
                    <div class="small long" data-testid="target-reason">
                      {t.reason_text ? `${t.reason_text} ` : null}
                      <code>{revealed(t.reason)}</code>
                    </div>
                  ) : null}
                  {!t.error && !t.reason ? <span class="muted">—</span> : null}
                </td>
                <td>
                  {t.after ? (
                    changedFields(t.before, t.after).map((f) => <Change field={f} before={t.before?.[f]} after={t.after?.[f]} type={d.types[f]} />)
                  ) : (
                    <>
                      <span class="muted">{t.outcome === 'unknown' ? 'no durable answer' : 'not written'}</span>
                      {t.before ? (
                        <div class="small" data-testid="target-before">
                          {beforeLabel(t.outcome)}:{' '}
                          {Object.entries(t.before).map(([f, v], i) => (
                            <>
                              {i > 0 ? ', ' : ''}
                              <code>{f}</code> = <Val value={v} type={d.types[f]} />
                            </>
                          ))}
                        </div>
                      ) : null}
                    </>
                  )}
                </td>
              </tr>
            ))}
          </DataTable>
        )}
      </section>
      <Remainder d={d} />
      <section aria-labelledby="compensation" data-testid="compensation">
        <h2 id="compensation">Compensation</h2>
        {!finished ? (
          <p>A compensation can be proposed once the operation has ended.</p>
        ) : d.plan && !d.plan.reversible ? (
          <p>The action is declared irreversible: there is no compensation.</p>
        ) : d.plan && restorabilityOf(d.plan.reversible, d.write).kind === 'refused' ? (
          <p data-testid="not-restorable">{reversibleWords(d.plan.reversible, d.write).text}</p>
        ) : o.follow_ups.compensation ? (
          <Proposed what="The compensation" kind="compensation" f={o.follow_ups.compensation} />
        ) : o.counts.succeeded === 0 ? (
          <p>No target was written, so there is nothing to restore.</p>
        ) : (
          <form method="post" action={paths.compensation(o.operation_id)}>
            <p>
              Proposes a new plan that restores the before-value of each of the {plural(o.counts.succeeded, 'succeeded target')}, only where the record still
              holds what this operation wrote. It is reviewed like any plan: you become its proposer, so another reviewer must approve it.
            </p>
            <CsrfField viewer={d.viewer} />
            <button type="submit" data-testid="propose-compensation">
              Propose compensation
            </button>
          </form>
        )}
      </section>
      <OperationAudit viewer={d.viewer} operationId={o.operation_id} planId={o.plan_id} audit={d.audit} />
      {o.stop_rules ? (
        <details>
          <summary>Stop rules this operation runs under</summary>
          <dl class="facts">
            {Object.entries(o.stop_rules).map(([k, v]) => (
              <>
                <dt>{k}</dt>
                <dd>{v === null ? 'none' : String(v)}</dd>
              </>
            ))}
          </dl>
        </details>
      ) : null}
    </Layout>
  )
}

import type { Child } from 'hono/jsx'
import { REASON_TEXT, type IncompleteReason } from '../contract/index.js'
import type { SelectionView } from '../selections/index.js'
import { CsrfField, Notice, type Viewer, When, paths } from './components.js'
import { count, plural } from './format.js'
import { revealed } from './reveal.js'

/** A reason in words and its code, with what the walk reported about it. */
function Reason(props: { reason: IncompleteReason }) {
  const r = props.reason
  return (
    <li data-testid={`reason-${r.code}`}>
      <strong>{REASON_TEXT[r.code] ?? r.code}</strong> <code>{r.code}</code>
      <div class="small">
        {sentence(revealed(r.message))}
        {r.source ? ` Source: ${revealed(r.source)}.` : ''}
        {r.limit ? ` Limit: ${revealed(r.limit.name)} = ${count(r.limit.value)}.` : ''}
        {r.retry_after_seconds !== undefined ? ` Retry after ${r.retry_after_seconds} s.` : ''}
        {r.upstream_status !== undefined ? ` Upstream status ${r.upstream_status}.` : ''}
      </div>
    </li>
  )
}

/**
 * Question 5: what is missing. When the inventory was incomplete: the reasons (words and codes), what was
 * returned, and the choices (retry, worded by what stopped the walk; restrict to the returned ids, abandon).
 */
export function MissingSection(props: { selection: SelectionView; viewer: Viewer; planId?: string | null; id?: string; heading?: string; extra?: Child }) {
  const s = props.selection
  const id = props.id ?? 'missing'
  const warnings = s.warnings.length > 0 ? (
    <>
      <h3>Warnings (they do not decide completeness)</h3>
      <ul class="clauses">
        {s.warnings.map((w) => (
          <li>
            <code>{w.code}</code>: {revealed(w.message)}
            {w.fields ? ` (${w.fields.map((f) => `${revealed(f.field)}: ${revealed(f.reason)}`).join('; ')})` : ''}
          </li>
        ))}
      </ul>
    </>
  ) : null
  if (s.complete)
    return (
      <section aria-labelledby={id}>
        <h2 id={id}>{props.heading ?? '5. What is missing'}</h2>
        <p data-testid="nothing-missing">
          <strong>Nothing.</strong> The inventory walk reached the end of the requested scope: <code>complete: true</code>. An empty part of this set would
          prove absence.
        </p>
        {s.recovery_of ? (
          <p>
            This selection recovers the incomplete selection <a href={paths.selection(s.recovery_of)}>{s.recovery_of}</a>: it holds exactly the records that
            one returned{s.complete ? ', every one of them read again' : ', but its own walk did not read them all (see why above)'}. Records the first walk never reached are not in it.
          </p>
        ) : null}
        {warnings}
        {props.extra}
      </section>
    )
  const hidden = props.planId ? <input type="hidden" name="plan_id" value={props.planId} /> : null
  const advice = retryAdvice(s.incomplete_reasons)
  return (
    <section aria-labelledby={id} data-testid="missing">
      <h2 id={id}>{props.heading ?? '5. What is missing'}</h2>
      <Notice kind="error" title="The evidence is incomplete: this cannot be approved.">
        <p>
          The inventory returned <strong data-testid="returned-count">{plural(s.count, 'record')}</strong>
          {s.exclusions.length > 0 ? ` (and set aside ${plural(s.exclusions.reduce((n, e) => n + e.count, 0), 'record')} by exclusion rules)` : ''}, then
          stopped before it covered the whole scope. Records it never reached may match the filter; they are not listed, and their absence proves nothing.
        </p>
      </Notice>
      <h3>Why it stopped</h3>
      <ul class="clauses" data-testid="reasons">
        {s.incomplete_reasons.map((r) => (
          <Reason reason={r} />
        ))}
      </ul>
      {s.continuation ? (
        <p class="small muted">
          The walk's own continuation: <code>{s.continuation.kind}</code>
          {s.continuation.kind === 'retry_with_deadline' ? ` (at least ${count(s.continuation.minimum_deadline_ms)} ms)` : ''}
          {s.continuation.kind === 'retry_after' ? ` (after ${s.continuation.retry_after_seconds} s)` : ''}
          {s.continuation.kind === 'narrow_query' ? `: ${revealed(s.continuation.message)}` : ''}.
        </p>
      ) : null}
      {warnings}
      <h3>Your choices</h3>
      <div class="choices" data-testid="recovery-choices">
        <form class="choice" method="post" action={paths.retry(s.selection_id)}>
          <h4>{advice.title}</h4>
          <p class="small">
            {advice.why ? `${advice.why} ` : ''}Walks the whole inventory again, from the start, as a new selection with a new digest (the data may have moved since).
            {props.planId ? ' The same action is proposed on it, with you as its proposer: another reviewer must approve it.' : ''}
          </p>
          <CsrfField viewer={props.viewer} />
          {hidden}
          <label for={`deadline-${s.selection_id}`}>Deadline</label>{' '}
          <select id={`deadline-${s.selection_id}`} name="deadline_seconds">
            <option value="120">2 minutes</option>
            <option value="600" selected>
              10 minutes
            </option>
            <option value="1800">30 minutes</option>
            <option value="3600">1 hour</option>
          </select>
          <div class="actions">
            <button type="submit">Retry the inventory</button>
          </div>
        </form>
        {/* no recovery when the walk returned nothing: there is no id to restrict to, and the service refuses it */}
        {s.recovery ? (
          <form class="choice" method="post" action={paths.recover(s.selection_id)}>
            <h4>Restrict to the {plural(s.count, 'returned record')}</h4>
            <p class="small">{sentence(s.recovery.message)}</p>
            {props.planId ? <p class="small">The same action is proposed on it, with you as its proposer: another reviewer must approve it.</p> : null}
            <CsrfField viewer={props.viewer} />
            {hidden}
            <div class="actions">
              <button type="submit">Restrict to the returned ids</button>
            </div>
          </form>
        ) : null}
        <div class="choice">
          <h4>Abandon</h4>
          <p class="small">
            Do nothing: nothing is written. The selection{props.planId ? ' and this plan expire' : ' expires'} <When iso={s.expires_at} relativeTo={props.viewer.now} />. Tell the
            agent why.
          </p>
          <div class="actions">
            <a class="button" href={paths.queue}>
              Back to the queue
            </a>
          </div>
        </div>
      </div>
      {props.extra}
    </section>
  )
}

/**
 * What walking again can mend, from why the walk stopped: its own budget (a longer deadline helps; a retry walks
 * without page or item budgets), a source that did not answer (only walking once it is back helps, never a longer
 * deadline), a source that failed for good (neither helps until it is fixed). Never advice that cannot help.
 */
export function retryAdvice(reasons: readonly IncompleteReason[]): { readonly title: string; readonly why: string | null } {
  const budget = reasons.some((r) => r.code === 'CLIENT_LIMIT_REACHED' || r.limit?.name === 'deadline_ms')
  const down = reasons.filter((r) => r.code === 'RATE_LIMITED' || (r.code === 'SOURCE_UNAVAILABLE' && r.retry_after_seconds !== undefined))
  const failed = reasons.some((r) => r.code === 'SOURCE_UNAVAILABLE' && r.retry_after_seconds === undefined)
  const seconds = Math.max(...down.map((r) => r.retry_after_seconds ?? 0))
  const back = `a source did not answer: walking again helps once the source is back${seconds > 0 ? `, after ${seconds} s at the earliest` : ''}, and a longer deadline alone does not`
  const broken = 'a source failed in a way walking again does not mend (see why above): retry once that is fixed'
  const said = [budget ? "the walk's own budget stopped it: a longer deadline helps" : null, down.length > 0 ? back : null, failed ? broken : null].filter((x) => x !== null)
  const why = said.length > 0 ? sentence(said.join('; ')) : "Nothing above says this walk's own deadline stopped it, so a longer one may not help (see why above)."
  if (budget && down.length > 0) return { title: 'Retry with a longer deadline, once the source is back', why }
  if (budget && !failed) return { title: 'Retry with a longer deadline', why: null }
  if (budget) return { title: 'Retry with a longer deadline, once the failed source is fixed', why }
  if (down.length > 0) return { title: 'Retry once the source is back', why }
  if (failed) return { title: 'Retry once the failed source is fixed', why }
  return { title: 'Walk the inventory again', why }
}

/** A service message as a sentence: capitalised, ending with a full stop. */
function sentence(text: string): string {
  const t = text.trim()
  if (!t) return t
  const capital = t[0]!.toUpperCase() + t.slice(1)
  return /[.!?)]$/.test(capital) ? capital : `${capital}.`
}

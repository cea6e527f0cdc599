import type { Child } from 'hono/jsx'
import { REASON_TEXT, type IncompleteReason } from '../contract/index.js'
import type { ChangesPage } from '../plans/index.js'
import type { MemberPage, SelectionView } from '../selections/index.js'
import { Change, CsrfField, Notice, TableScroll, Val, type Viewer, When, paths } from './components.js'
import { count, filterClauses, plural } from './format.js'

/** Rows per manifest page the reviewer can pick. */
export const PAGE_SIZES = [25, 50, 100, 250, 500] as const
export const DEFAULT_PAGE_SIZE = 50

/** Question 1: which resource and environment; what the credential could see; whether the read was a snapshot. */
export function WhereSection(props: { selection: SelectionView; id?: string }) {
  const s = props.selection
  return (
    <section aria-labelledby={props.id ?? 'where'}>
      <h2 id={props.id ?? 'where'}>1. Where the write lands</h2>
      <dl class="facts">
        <dt>Environment</dt>
        <dd>
          <strong>{s.environment}</strong>
        </dd>
        <dt>Resource</dt>
        <dd>
          <code>{s.resource}</code>
        </dd>
        <dt>Visible to the credential</dt>
        <dd>{s.scope.visibility}</dd>
        <dt>Sources read</dt>
        <dd>{s.scope.sources && s.scope.sources.length > 0 ? s.scope.sources.join(', ') : <span class="empty">not reported</span>}</dd>
        <dt>Snapshot</dt>
        <dd>
          {s.consistent_snapshot
            ? `consistent snapshot${s.scope.snapshot ? ` (${s.scope.snapshot})` : ''}`
            : 'no consistent snapshot: records were read page by page, and each write re-checks its record'}
        </dd>
      </dl>
    </section>
  )
}

/** Question 2: the selector, each clause and each exclusion rule in words, with what each rule removed. */
export function SelectorSection(props: { selection: SelectionView; id?: string }) {
  const s = props.selection
  const clauses = filterClauses(s.selector.filter)
  const removed = s.exclusions.reduce((n, e) => n + e.count, 0)
  return (
    <section aria-labelledby={props.id ?? 'selector'}>
      <h2 id={props.id ?? 'selector'}>2. The selector that produced this set</h2>
      <h3>Filter: a record is included when</h3>
      {clauses.length === 0 ? (
        <p>
          <strong>every record matches</strong> (no condition): the whole resource, as far as the credential can see.
        </p>
      ) : (
        <ul class="clauses" data-testid="filter-clauses">
          {clauses.map((c, i) => (
            <li>
              {i > 0 ? <span class="muted">and </span> : null}
              {c}
            </li>
          ))}
        </ul>
      )}
      <h3>Exclusion rules: a matching record is removed from the set</h3>
      {s.exclusions.length === 0 ? (
        <p data-testid="no-exclusions">
          <strong>No exclusion rule.</strong> Nothing was set aside: every record the filter matched is in the set.
        </p>
      ) : (
        <>
          <TableScroll label="Exclusion rules">
            <table data-testid="exclusions">
              <caption>
                {plural(s.exclusions.length, 'rule')} removed {plural(removed, 'record')}
              </caption>
              <thead>
                <tr>
                  <th scope="col">Rule</th>
                  <th scope="col">Removes a record when</th>
                  <th scope="col">Records removed</th>
                </tr>
              </thead>
              <tbody>
                {s.exclusions.map((e) => (
                  <tr data-rule={e.rule}>
                    <th scope="row">
                      <code>{e.rule}</code>
                    </th>
                    <td>{filterClauses(e.filter).join(' and ') || 'every record'}</td>
                    <td>
                      <strong data-testid={`excluded-count-${e.rule}`}>{count(e.count)}</strong>{' '}
                      {e.count > 0 ? <a href={paths.excluded(s.selection_id, e.rule)}>see {e.count === 1 ? 'it' : 'them'}</a> : <span class="muted">(none)</span>}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
          <p class="muted small">{s.exclusion_rule}.</p>
        </>
      )}
    </section>
  )
}

export interface ManifestNav {
  /** The page URL without manifest paging parameters. */
  readonly base: string
  readonly limit: number
  /** Whether this is not the first page. */
  readonly paged: boolean
  /** The URL of the next page, when there is one. */
  readonly next: string | null
}

/** Question 3: which records. Every member, paged by cursor; groups; exclusions; export of the whole set. */
export function RecordsSection(props: {
  selection: SelectionView
  page: MemberPage
  changes?: ChangesPage | null
  nav: ManifestNav
  id?: string
  heading?: string
}) {
  const s = props.selection
  const records = props.page.records
  const first = records[0]
  const last = records[records.length - 1]
  const byOrd = new Map((props.changes?.changes ?? []).map((c) => [c.ord, c.changes]))
  return (
    <section aria-labelledby={props.id ?? 'records'}>
      <h2 id={props.id ?? 'records'}>{props.heading ?? '3. Which records'}</h2>
      <p>
        <strong data-testid="manifest-count">{plural(s.count, 'record')}</strong> in the frozen manifest (digest <code class="digest" title={s.digest}>{s.digest}</code>
        ). The table pages through <em>all</em> of them; nothing here is a sample.
      </p>
      <p>
        Export the whole manifest: <a href={paths.exportOf(s.selection_id, 'csv')} data-testid="export-csv">CSV</a> ·{' '}
        <a href={paths.exportOf(s.selection_id, 'ndjson')} data-testid="export-ndjson">NDJSON</a> <span class="muted small">({plural(s.count, 'row')} each)</span>
      </p>
      {s.groups.length > 0 ? (
        <>
          <h3>Counts per group</h3>
          <div class="groups">
            {s.groups.map((g) => (
              <TableScroll label={`Records per ${g.field}`}>
                <table data-testid={`group-${g.field}`}>
                  <caption>
                    By <code>{g.field}</code> ({plural(g.distinct, 'value')})
                  </caption>
                  <thead>
                    <tr>
                      <th scope="col">{g.field}</th>
                      <th scope="col" class="num">
                        Records
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {g.values.map((v) => (
                      <tr>
                        <th scope="row">
                          <Val value={v.value} />
                        </th>
                        <td class="num">{count(v.count)}</td>
                      </tr>
                    ))}
                    {!g.complete || g.other_count > 0 ? (
                      <tr>
                        <th scope="row" class="muted">
                          other values
                        </th>
                        <td class="num">{count(g.other_count)}</td>
                      </tr>
                    ) : null}
                  </tbody>
                </table>
              </TableScroll>
            ))}
          </div>
        </>
      ) : null}
      <h3 id={`${props.id ?? 'records'}-manifest`}>The manifest{props.changes ? ', with what each record receives' : ''}</h3>
      <p class="small">
        <strong>Order:</strong> {props.page.page.ordering}, the frozen order. The store pages the manifest by cursor in this order only, so no other sort
        is offered: sorting just the rows on screen would misrepresent the set. To sort or filter the whole manifest by a review field, export it.
      </p>
      <div class="pager">
        <span data-testid="page-range">
          {first && last ? `Records ${count(first.ord)}–${count(last.ord)} of ${count(s.count)}` : `No record on this page (${count(s.count)} in all)`}
        </span>
        {props.nav.paged ? <a href={props.nav.base}>First page</a> : null}
        {props.nav.next ? (
          <a href={props.nav.next} rel="next" data-testid="next-page">
            Next page
          </a>
        ) : (
          <span class="muted">Last page</span>
        )}
        <form method="get" action={props.nav.base.split('?')[0]}>
          <label for="limit">Rows per page</label>
          <select id="limit" name="limit">
            {PAGE_SIZES.map((n) => (
              <option value={String(n)} selected={n === props.nav.limit}>
                {n}
              </option>
            ))}
          </select>
          <button type="submit">Show</button>
        </form>
      </div>
      <TableScroll label="Manifest">
        <table data-testid="manifest">
          <caption class="muted small">
            {s.fields.length} review field{s.fields.length === 1 ? '' : 's'}: {s.fields.join(', ')}
          </caption>
          <thead>
            <tr>
              <th scope="col" class="num">
                #
              </th>
              {s.fields.map((f) => (
                <th scope="col">{f}</th>
              ))}
              {props.changes ? <th scope="col">Before → after</th> : null}
            </tr>
          </thead>
          <tbody>
            {records.map((r) => (
              <tr>
                <td class="num">{count(r.ord)}</td>
                {s.fields.map((f, i) =>
                  i === 0 ? (
                    <th scope="row">
                      <Val value={r.fields[f]} />
                    </th>
                  ) : (
                    <td>
                      <Val value={r.fields[f]} />
                    </td>
                  ),
                )}
                {props.changes ? (
                  <td>
                    {(byOrd.get(r.ord) ?? []).map((c) => (
                      <Change field={c.field} before={c.before} after={c.after} />
                    ))}
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      </TableScroll>
      {props.nav.next ? (
        <p>
          <a href={props.nav.next} rel="next">
            Next page
          </a>
        </p>
      ) : null}
    </section>
  )
}

/** A reason in words and its code, with what the walk reported about it. */
function Reason(props: { reason: IncompleteReason }) {
  const r = props.reason
  return (
    <li data-testid={`reason-${r.code}`}>
      <strong>{REASON_TEXT[r.code] ?? r.code}</strong> <code>{r.code}</code>
      <div class="small">
        {sentence(r.message)}
        {r.source ? ` Source: ${r.source}.` : ''}
        {r.limit ? ` Limit: ${r.limit.name} = ${count(r.limit.value)}.` : ''}
        {r.retry_after_seconds !== undefined ? ` Retry after ${r.retry_after_seconds} s.` : ''}
        {r.upstream_status !== undefined ? ` Upstream status ${r.upstream_status}.` : ''}
      </div>
    </li>
  )
}

/**
 * Question 5: what is missing. When the inventory was incomplete: the reasons (words and codes), what was
 * returned, and the choices (retry with a longer deadline, restrict to the returned ids, abandon).
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
            <code>{w.code}</code>: {w.message}
            {w.fields ? ` (${w.fields.map((f) => `${f.field}: ${f.reason}`).join('; ')})` : ''}
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
            one returned, complete by construction. Records the first walk never reached are not in it.
          </p>
        ) : null}
        {warnings}
        {props.extra}
      </section>
    )
  const hidden = props.planId ? <input type="hidden" name="plan_id" value={props.planId} /> : null
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
          {s.continuation.kind === 'narrow_query' ? `: ${s.continuation.message}` : ''}.
        </p>
      ) : null}
      {warnings}
      <h3>Your choices</h3>
      <div class="choices" data-testid="recovery-choices">
        <form class="choice" method="post" action={paths.retry(s.selection_id)}>
          <h4>Retry with a longer deadline</h4>
          <p class="small">
            Walks the whole inventory again, from the start, as a new selection with a new digest (the data may have moved since).
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
        <form class="choice" method="post" action={paths.recover(s.selection_id)}>
          <h4>Restrict to the {plural(s.count, 'returned record')}</h4>
          <p class="small">{sentence(s.recovery?.message ?? 'a new selection of exactly the records this one returned, complete by construction')}</p>
          {props.planId ? <p class="small">The same action is proposed on it, with you as its proposer: another reviewer must approve it.</p> : null}
          <CsrfField viewer={props.viewer} />
          {hidden}
          <div class="actions">
            <button type="submit">Restrict to the returned ids</button>
          </div>
        </form>
        <div class="choice">
          <h4>Abandon</h4>
          <p class="small">
            Do nothing: nothing is written. The selection{props.planId ? ' and this plan' : ''} expire <When iso={s.expires_at} relativeToo />. Tell the
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

/** A service message as a sentence: capitalised, ending with a full stop. */
function sentence(text: string): string {
  const t = text.trim()
  if (!t) return t
  const capital = t[0]!.toUpperCase() + t.slice(1)
  return /[.!?)]$/.test(capital) ? capital : `${capital}.`
}

import type { ChangesPage } from '../plans/index.js'
import type { MemberPage, SelectionView } from '../selections/index.js'
import { Change, DataTable, PageLinks, RecordCells, Val, paths } from './components.js'
import { type FieldTypes, type IdField, count, filterClauses, plural } from './format.js'
import { revealed } from './reveal.js'

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
          <strong>{revealed(s.environment)}</strong>
        </dd>
        <dt>Resource</dt>
        <dd>
          <code>{revealed(s.resource)}</code>
        </dd>
        <dt>Visible to the credential</dt>
        <dd>{revealed(s.scope.visibility)}</dd>
        <dt>Sources read</dt>
        <dd>{s.scope.sources && s.scope.sources.length > 0 ? revealed(s.scope.sources.join(', ')) : <span class="empty">not reported</span>}</dd>
        <dt>Snapshot</dt>
        <dd>
          {s.consistent_snapshot
            ? // the snapshot's text comes from the upstream (a SQLite snapshot names its highest id)
              `consistent snapshot${s.scope.snapshot ? ` (${revealed(s.scope.snapshot)})` : ''}`
            : 'no consistent snapshot: records were read page by page, and each write re-checks its record'}
        </dd>
      </dl>
    </section>
  )
}

/** Question 2: the selector, each clause and each exclusion rule in words, with what each rule removed. */
export function SelectorSection(props: { selection: SelectionView; id?: string; idField?: IdField | undefined }) {
  const s = props.selection
  const clauses = filterClauses(s.selector.filter, props.idField)
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
          <strong>No exclusion rule.</strong>{' '}
          {s.complete
            ? 'Nothing was set aside: every record the filter matched is in the set.'
            : // an incomplete walk knows only the records it read: the ones it never reached may match and are in no set
              'Nothing was set aside: every record the walk read that matched the filter is in the set; records it never reached may match too and are not in it (see what is missing).'}
        </p>
      ) : (
        <>
          <DataTable
            label="Exclusion rules"
            testid="exclusions"
            caption={
              <>
                {plural(s.exclusions.length, 'rule')} removed {plural(removed, 'record')}
              </>
            }
            columns={['Rule', 'Removes a record when', 'Records removed']}
          >
            {s.exclusions.map((e) => (
              <tr data-rule={e.rule}>
                <th scope="row">
                  <code>{e.rule}</code>
                </th>
                {/* wrapped anywhere: an agent's condition of one long word pushed the count of removed records out of sight */}
                <td class="long">{filterClauses(e.filter, props.idField).join(' and ') || 'every record'}</td>
                <td>
                  <strong data-testid={`excluded-count-${e.rule}`}>{count(e.count)}</strong>{' '}
                  {e.count > 0 ? <a href={paths.excluded(s.selection_id, e.rule)}>see {e.count === 1 ? 'it' : 'them'}</a> : <span class="muted">(none)</span>}
                </td>
              </tr>
            ))}
          </DataTable>
          <p class="muted small">
            {s.exclusion_rule}.
            {s.complete ? null : ' These count only what they removed of the records the walk read: records it never reached were judged by no rule.'}
          </p>
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
  /** The resource's declared field types: a number field may hold its exact digits as text. */
  types: FieldTypes
  id?: string
  heading?: string
}) {
  const s = props.selection
  const records = props.page.records
  const first = records[0]
  const last = records[records.length - 1]
  const byOrd = new Map((props.changes?.changes ?? []).map((c) => [c.ord, c]))
  return (
    <section aria-labelledby={props.id ?? 'records'}>
      <h2 id={props.id ?? 'records'}>{props.heading ?? '3. Which records'}</h2>
      <p>
        <strong data-testid="manifest-count">{plural(s.count, 'record')}</strong> in the frozen manifest (digest <code class="digest" title={s.digest}>{s.digest}</code>
        ). The table pages through <em>all</em> of them;{' '}
        {s.complete
          ? 'nothing here is a sample.'
          : 'they are what the walk returned before it stopped, not every record the filter matches (see what is missing).'}
      </p>
      <p>
        Export the whole manifest: <a href={paths.exportOf(s.selection_id, 'csv')} data-testid="export-csv">CSV</a> ·{' '}
        <a href={paths.exportOf(s.selection_id, 'ndjson')} data-testid="export-ndjson">NDJSON</a> <span class="muted small">({plural(s.count, 'row')} each)</span>
      </p>
      {s.groups.length > 0 ? (
        <>
          <h3>Counts per group</h3>
          {s.complete ? null : (
            <p class="small" data-testid="groups-partial">
              These count only the records the incomplete inventory returned: records it never reached may hold any value, in any number.
            </p>
          )}
          <div class="groups">
            {s.groups.map((g) => (
              <DataTable
                label={`Records per ${g.field}`}
                testid={`group-${g.field}`}
                caption={
                  <>
                    By <code>{g.field}</code> ({plural(g.distinct, 'value')})
                  </>
                }
                columns={[g.field, { num: 'Records' }]}
              >
                {g.values.map((v) => (
                  <tr>
                    <th scope="row">
                      <Val value={v.value} type={props.types[g.field]} />
                    </th>
                    <td class="num">{count(v.count)}</td>
                  </tr>
                ))}
                {g.distinct > g.values.length || g.other_count > 0 ? (
                  <tr>
                    <th scope="row" class="muted">
                      other values
                    </th>
                    <td class="num">{count(g.other_count)}</td>
                  </tr>
                ) : null}
              </DataTable>
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
        <PageLinks first={props.nav.paged ? props.nav.base : null} next={props.nav.next} nextTestid="next-page" />
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
      <DataTable
        label="Manifest"
        testid="manifest"
        captionClass="muted small"
        caption={
          <>
            {s.fields.length} review field{s.fields.length === 1 ? '' : 's'}: {s.fields.join(', ')}
          </>
        }
        columns={[{ num: '#' }, ...s.fields, ...(props.changes ? ['Before → after'] : [])]}
      >
        {records.map((r) => (
          <tr>
            <RecordCells ord={r.ord} fields={s.fields} values={r.fields} types={props.types} />
            {props.changes ? (
              <td>
                {/* The link pages records and changes by two cursors: one crafted or mismatched must not leave a written
                    record's change blank, which reads as "nothing happens to it". */}
                {byOrd.has(r.ord) ? (
                  <RecordChange record={byOrd.get(r.ord)!} types={props.types} />
                ) : (
                  <strong class="empty" data-testid="change-not-read">
                    not read with this page: its change is on another page of changes; open the <a href={props.nav.base}>first page</a> and page on
                  </strong>
                )}
              </td>
            ) : null}
          </tr>
        ))}
      </DataTable>
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

/** Why the write would skip a record, as the summary words it. */
const SKIP_WORDS = {
  fails_precondition: 'fails the precondition as frozen',
  no_longer_holds_written: 'no longer holds what the operation wrote',
} as const

/**
 * One record's change; a record the write would skip says so instead of an arrow: "state: paid → overdue" read as
 * written where it fails the precondition as frozen. One that cannot be judged shows its change and says so.
 */
function RecordChange(props: { record: ChangesPage['changes'][number]; types: FieldTypes }) {
  const skipped = props.record.skipped
  if (skipped === 'fails_precondition' || skipped === 'no_longer_holds_written')
    return <strong data-testid="change-skipped">would be skipped ({SKIP_WORDS[skipped]}): not written</strong>
  return (
    <>
      {props.record.changes.map((c) => (
        <Change field={c.field} before={c.before} after={c.after} type={props.types[c.field]} />
      ))}
      {skipped === 'unknown' ? (
        <span class="muted small" data-testid="change-skip-unknown">
          may be skipped: whether it still meets the write's condition is not known here
        </span>
      ) : null}
    </>
  )
}

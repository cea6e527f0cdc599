import type { ExcludedPage, MemberPage, SelectionView } from '../../selections/index.js'
import { CompletenessBanner, DataTable, EnvBanner, type Flash, type Reach, FlashNotice, Layout, Notice, PageLinks, RecordCells, type Viewer, When, Who, paths } from '../components.js'
import { type FieldTypes, type IdField, count, filterText, plural } from '../format.js'
import { LookalikeNotice } from '../lookalike-notice.js'
import { MissingSection } from '../missing-evidence.js'
import { type ManifestNav, RecordsSection, SelectorSection, WhereSection } from '../selection-parts.js'

/** A selection on its own (no action yet): where, selector, records, what is missing, and the recovery choices. */
export function SelectionPage(d: { viewer: Viewer; selection: SelectionView; page: MemberPage; nav: ManifestNav; types: FieldTypes; idField?: IdField | undefined; reach: Reach; notice?: Flash | null }) {
  const s = d.selection
  return (
    <Layout title={`Selection of ${plural(s.count, 'record')} in ${s.environment}`} viewer={d.viewer}>
      <EnvBanner environment={s.environment} resource={s.resource} reach={d.reach} label="Read from" what={<>selection of {plural(s.count, 'record')}</>} />
      <CompletenessBanner complete={s.complete} count={s.count} reasons={s.incomplete_reasons} anchor="#missing" />
      <FlashNotice flash={d.notice} />
      {s.upstream_moved ? (
        <Notice kind="error" title="Read from another upstream than the resource now points at" testid="upstream-moved">
          <p>{s.upstream_moved}</p>
        </Notice>
      ) : null}
      <LookalikeNotice lookalikes={s.lookalike_ids} of="selection" selectionId={s.selection_id} />
      <h1>
        Selection <code>{s.selection_id}</code>
      </h1>
      <p>
        Created by <strong><Who viewer={d.viewer} principal={s.created_by} /></strong> <When iso={s.created_at} relativeTo={d.viewer.now} />; {s.state === 'expired' ? 'expired' : 'expires'}{' '}
        <When iso={s.expires_at} relativeTo={d.viewer.now} />. No action is bound to a selection: an agent proposes one (<code>POST /v1/selections/{s.selection_id}/plans</code>
        ), and the plan then waits in the <a href={paths.queue}>queue</a>.
      </p>
      <WhereSection selection={s} />
      <SelectorSection selection={s} idField={d.idField} />
      <RecordsSection selection={s} page={d.page} nav={d.nav} types={d.types} />
      <MissingSection selection={s} viewer={d.viewer} heading="4. What is missing" />
    </Layout>
  )
}

/** The records one exclusion rule removed, paged by cursor. */
export function ExcludedPageView(d: { viewer: Viewer; selection: SelectionView; page: ExcludedPage; types: FieldTypes; idField?: IdField | undefined; reach: Reach; base: string; paged: boolean; next: string | null }) {
  const s = d.selection
  const records = d.page.records
  const first = records[0]
  const last = records[records.length - 1]
  return (
    <Layout title={`Excluded by ${d.page.rule}`} viewer={d.viewer}>
      <EnvBanner environment={s.environment} resource={s.resource} reach={d.reach} label="Read from" />
      <h1>
        Records removed by the rule <code>{d.page.rule}</code>
      </h1>
      <p>
        The rule removes a record when <strong>{filterText(d.page.filter, d.idField)}</strong>. It removed <strong data-testid="excluded-total">{plural(d.page.count, 'record')}</strong>{' '}
        from selection <a href={paths.selection(s.selection_id)}>{s.selection_id}</a>: they are <em>not</em> changed by any plan on it.
      </p>
      <div class="pager">
        <span>{first && last ? `Records ${count(first.ord)}–${count(last.ord)} of ${count(d.page.count)}` : 'No record'}</span>
        <PageLinks first={d.paged ? d.base : null} next={d.next} />
      </div>
      {records.length === 0 ? (
        <Notice kind="info" title="This rule removed no record." />
      ) : (
        <DataTable label={`Records removed by ${d.page.rule}`} testid="excluded" columns={[{ num: '#' }, ...s.fields]}>
          {records.map((r) => (
            <tr>
              <RecordCells ord={r.ord} fields={s.fields} values={r.fields} types={d.types} />
            </tr>
          ))}
        </DataTable>
      )}
    </Layout>
  )
}

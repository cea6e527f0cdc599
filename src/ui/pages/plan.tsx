import type { WriteConfig } from '../../config/index.js'
import type { Filter } from '../../contract/index.js'
import type { WebhookDelivery } from '../../notifications/index.js'
import type { OperationView } from '../../operations/index.js'
import { type ChangesPage, type PlanView, unchangedWords } from '../../plans/index.js'
import type { MemberPage, SelectionView } from '../../selections/index.js'
import { AgentWords, WarrantWords, CompletenessBanner, RecordId, DataTable, EnvBanner, type Flash, type Reach, FlashNotice, Layout, Notice, Pill, type Viewer, When, Who, paths } from '../components.js'
import { type FieldTypes, type IdField, count, filterClauses, filterText, plural } from '../format.js'
import { revealed } from '../reveal.js'
import { DecisionSection } from './plan-decision.js'
import { EffectHeadline, EffectTable, SetValue, alreadyHeld, skippedTargets } from './plan-effect.js'
import { LookalikeNotice } from '../lookalike-notice.js'
import { MissingSection } from '../missing-evidence.js'
import { type ManifestNav, RecordsSection, SelectorSection, WhereSection } from '../selection-parts.js'
import { RunLimitsSection } from '../run-limits.js'
import { WriteRequest, reversibleWords } from '../write-request.js'

export interface PlanPageData {
  readonly viewer: Viewer
  readonly plan: PlanView
  readonly selection: SelectionView
  readonly page: MemberPage
  /** Null when the writes can no longer be rendered (the action was removed from the config). */
  readonly changes: ChangesPage | null
  /** What changed in the config since the proposal that stops this plan from ever being committed. */
  readonly configChanged: readonly { readonly code: string; readonly text: string }[]
  readonly nav: ManifestNav
  /** The resource's declared field types: a number field may hold its exact digits as text. */
  readonly types: FieldTypes
  /** The resource's id field and its type: a selector naming integer ids shows them as numbers. */
  readonly idField?: IdField | undefined
  /** The hosts the connector reaches, and a label naming another. */
  readonly reach: Reach
  /** The http request each record is written by (null for sql). */
  readonly write: WriteConfig | null
  /** The fields the action sets from the agent's parameters: their values are shown as the agent's words. */
  readonly agentFields: ReadonlySet<string>
  readonly operations: readonly OperationView[]
  readonly deliveries: readonly WebhookDelivery[]
  readonly notificationsEnabled: boolean
  /** A refusal or confirmation to show at the top, e.g. after a decision. */
  readonly notice?: Flash | null
}

/** The records an exclusion rule removes, in words: "the records where tags contain legal_hold". */
function removedBy(filter: Filter, idField: IdField | undefined): string {
  const clauses = filterClauses(filter, idField)
  return clauses.length === 0 ? 'every record (no condition)' : `the records where ${clauses.join(' and ')}`
}

function Glance(props: { d: PlanPageData }) {
  const { plan, selection } = props.d
  const summary = plan.changes.summary
  const skipped = skippedTargets(plan)
  const removed = selection.exclusions.reduce((n, e) => n + e.count, 0)
  return (
    <dl class="glance" aria-label="The plan at a glance" data-testid="glance">
      <dt>
        <a href="#where">1. Where</a>
      </dt>
      <dd>
        {revealed(plan.environment)} · <code>{revealed(plan.resource)}</code>
      </dd>
      <dt>
        <a href="#selector">2. Selector</a>
      </dt>
      <dd>
        {filterText(selection.selector.filter, props.d.idField)}
        {selection.exclusions.length > 0
          ? // what each rule removes, in words: its name is the agent's, and "legal_hold" may remove anything
            `; excluding ${selection.exclusions.map((e) => `${removedBy(e.filter, props.d.idField)} (${count(e.count)}, rule "${e.rule}")`).join('; ')}`
          : '; no exclusion rule'}
      </dd>
      <dt>
        <a href="#records">3. Records</a>
      </dt>
      <dd>
        {plural(plan.target_count, 'record')}
        {removed > 0 ? `, ${count(removed)} excluded by rules` : ''}
      </dd>
      <dt>
        <a href="#effect">4. Change</a>
      </dt>
      <dd>
        <code>{plan.action.type}</code>
        {plan.changes.uniform && summary.length > 0 && skipped >= plan.target_count ? (
          ': nothing written (every record would be skipped)'
        ) : plan.changes.uniform && summary.length > 0 ? (
          <>
            {': '}
            {summary.map((s, i) => (
              <>
                {i > 0 ? ', ' : ''}
                {s.field} → <SetValue field={s.field} value={s.after} types={props.d.types} agentFields={props.d.agentFields} />
                {alreadyHeld(s.unchanged, plan.target_count - skipped, skipped)}
              </>
            ))}
          </>
        ) : (
          ': values differ per record'
        )}
        {reversibleWords(plan.reversible, props.d.write).glance}
        <ChangingCount plan={plan} />
      </dd>
      <dt>
        <a href="#missing">5. Missing</a>
      </dt>
      <dd>{selection.complete ? 'nothing: the inventory is complete' : <strong>evidence is missing: {selection.incomplete_reasons.map((r) => r.code).join(', ')}</strong>}</dd>
    </dl>
  )
}

/** How many targets the write actually changes; said loudly when none does. Nothing when unknown. */
function ChangingCount(props: { plan: PlanView }) {
  const { changing } = props.plan.changes
  const targets = props.plan.target_count
  if (changing === null || targets === 0) return null
  const said = unchangedWords(props.plan, count)
  if (changing === 0) return <strong data-testid="changing">; no record changes: {said}</strong>
  return <span data-testid="changing">; {`${count(changing)} of ${plural(targets, 'record')} change${changing === 1 ? 's' : ''}${said === '' ? '' : `; ${said}`}`}</span>
}

function EffectSection(props: { plan: PlanView; types: FieldTypes; agentFields: ReadonlySet<string>; write: WriteConfig | null }) {
  const p = props.plan
  const params = Object.entries(p.action.params)
  return (
    <section aria-labelledby="effect">
      <h2 id="effect">4. What each record receives</h2>
      <p>
        Action <code>{p.action.type}</code>
        {p.action.description ? `: ${p.action.description}` : ''}.
      </p>
      {params.length > 0 ? (
        <dl class="facts" id="action-params" aria-label="Action parameters" data-testid="action-params">
          {params.map(([k, v]) => (
            <>
              <dt>{k}</dt>
              <dd>{p.precondition.per_target ? <WarrantWords value={v} /> : <AgentWords value={v} />}</dd>
            </>
          ))}
        </dl>
      ) : null}
      <WriteRequest write={props.write} />
      <EffectHeadline plan={p} types={props.types} agentFields={props.agentFields} />
      <EffectTable plan={p} types={props.types} agentFields={props.agentFields} />
      <h3>Precondition</h3>
      {p.precondition.per_target ? (
        <p data-testid="precondition">
          Each record is restored only if it still holds what the operation wrote; otherwise it is skipped, not written.
          {p.precondition.failing_now === null
            ? ' Whether the records still hold it could not all be read when this plan was proposed: each is checked at write time.'
            : p.precondition.failing_now > 0
              ? ` Read when this plan was proposed, ${plural(p.precondition.failing_now, 'record')} no longer held it: they would be skipped (the "before" column shows the data as read then).`
              : ' Read when this plan was proposed, every record still held it.'}
        </p>
      ) : (
        <p data-testid="precondition">
          Written only where, at write time, <strong>{filterText(p.precondition.filter)}</strong>; a record that no longer meets it, or whose version
          changed since it was frozen, is skipped, not written.
          {p.precondition.failing_now !== null && p.precondition.failing_now > 0
            ? ` ${plural(p.precondition.failing_now, 'record')} already fail${p.precondition.failing_now === 1 ? 's' : ''} it as frozen: they would be skipped.`
            : ''}
        </p>
      )}
      <h3>Reversible?</h3>
      <p data-testid="reversible">
        {reversibleWords(p.reversible, props.write).text}
      </p>
      <RunLimitsSection plan={p} />
    </section>
  )
}

function OperationsSection(props: { operations: readonly OperationView[] }) {
  if (props.operations.length === 0) return null
  return (
    <section aria-labelledby="operations">
      <h2 id="operations">Operations</h2>
      <DataTable
        label="Operations of this plan"
        columns={['Operation', 'State', { num: 'Succeeded' }, { num: 'Failed' }, { num: 'Skipped' }, { num: 'Unknown' }, { num: 'Pending' }, 'Started']}
      >
        {props.operations.map((o) => (
          <tr>
            <th scope="row">
              <a href={paths.operation(o.operation_id)}>{o.operation_id}</a>
            </th>
            <td>
              <Pill state={o.state} />
            </td>
            <td class="num">{count(o.counts.succeeded)}</td>
            <td class="num">{count(o.counts.failed)}</td>
            <td class="num">{count(o.counts.skipped)}</td>
            <td class="num">{count(o.counts.unknown)}</td>
            <td class="num">{count(o.counts.pending + o.counts.in_flight)}</td>
            <td>
              <When iso={o.created_at} />
            </td>
          </tr>
        ))}
      </DataTable>
    </section>
  )
}

function NotificationsSection(props: { deliveries: readonly WebhookDelivery[]; enabled: boolean }) {
  if (!props.enabled && props.deliveries.length === 0) return null
  const failed = props.deliveries.filter((x) => x.state === 'failed')
  const retrying = props.deliveries.filter((x) => x.state === 'pending' && x.attempts > 0)
  return (
    <section aria-labelledby="notifications">
      <h2 id="notifications">Notifications</h2>
      {failed.length > 0 ? (
        <Notice kind="error" title={`${plural(failed.length, 'notification')} could not be delivered.`} testid="notification-failures">
          <p>Reviewers relying on that webhook were not told. The last error of each is below.</p>
        </Notice>
      ) : null}
      {retrying.length > 0 ? (
        <Notice kind="warn" title={`${plural(retrying.length, 'notification')} failed and will be retried.`} testid="notification-retrying" />
      ) : null}
      {props.deliveries.length === 0 ? (
        <p class="muted">No notification was sent about this plan yet.</p>
      ) : (
        <DataTable label="Webhook deliveries" testid="deliveries" columns={['Event', 'Webhook', 'State', { num: 'Attempts' }, 'Last error', 'Updated']}>
          {props.deliveries.map((x) => (
            <tr class={x.state === 'failed' ? 'failed' : ''}>
              <th scope="row">{x.event}</th>
              <td>{revealed(x.webhook)}</td>
              <td>
                <Pill state={x.state} />
                {x.state === 'pending' && x.next_attempt_at ? <span class="small muted"> next <When iso={x.next_attempt_at} /></span> : null}
              </td>
              <td class="num">{count(x.attempts)}</td>
              <td>{x.last_error ? <span class="long">{revealed(x.last_error)}</span> : <span class="muted">none</span>}</td>
              <td>
                <When iso={x.updated_at} />
              </td>
            </tr>
          ))}
        </DataTable>
      )}
    </section>
  )
}

export function PlanPage(d: PlanPageData) {
  const p = d.plan
  const title = `${p.action.type} on ${plural(p.target_count, 'record')} in ${p.environment}`
  return (
    <Layout title={title} viewer={d.viewer}>
      <EnvBanner environment={p.environment} resource={p.resource} reach={d.reach} what={<>action <code>{p.action.type}</code> on {plural(p.target_count, 'record')}</>} />
      <CompletenessBanner complete={d.selection.complete} count={d.selection.count} reasons={d.selection.incomplete_reasons} anchor="#missing" />
      <FlashNotice flash={d.notice} />
      <h1>
        Plan {p.compensates ? 'to compensate an operation' : 'to review'}: <code>{p.action.type}</code> on {plural(p.target_count, 'record')}
      </h1>
      <p>
        <Pill state={p.state} /> Proposed by <strong><Who viewer={d.viewer} principal={p.proposed_by} /></strong> <When iso={p.created_at} relativeTo={d.viewer.now} />. The selection{' '}
        {d.selection.state === 'expired' ? 'expired' : 'expires'} <When iso={d.selection.expires_at} relativeTo={d.viewer.now} />. Plan <code>{p.plan_id}</code>, digest{' '}
        <code title={p.plan_digest}>{p.plan_digest.slice(0, 19)}…</code>.{' '}
        {p.state === 'pending' ? <a href="#decision">Go to the decision</a> : null} · <a href={paths.planAudit(p.plan_id)}>Audit trail</a>
        {p.compensates ? (
          <>
            {' '}
            · compensates <a href={paths.operation(p.compensates)}>{p.compensates}</a>
          </>
        ) : null}
      </p>
      <LookalikeNotice lookalikes={p.lookalike_ids} of="plan" selectionId={p.selection_id} />
      <Glance d={d} />
      <WhereSection selection={d.selection} />
      <SelectorSection selection={d.selection} idField={d.idField} />
      <RecordsSection selection={d.selection} page={d.page} changes={d.changes} nav={d.nav} types={d.types} />
      <EffectSection plan={p} types={d.types} agentFields={d.agentFields} write={d.write} />
      <MissingSection selection={d.selection} viewer={d.viewer} planId={p.plan_id} />
      <DecisionSection d={d} />
      <OperationsSection operations={d.operations} />
      <NotificationsSection deliveries={d.deliveries} enabled={d.notificationsEnabled} />
    </Layout>
  )
}

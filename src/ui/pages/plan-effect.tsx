import { type PlanView, unchangedTargets, unchangedWords } from '../../plans/index.js'
import { AgentWords, DataTable, Val } from '../components.js'
import { type FieldTypes, count, plural, scalarText } from '../format.js'

type FieldSummary = PlanView['changes']['summary'][number]
type ValueCount = { readonly value: unknown; readonly count: number }

/**
 * A value the action sets: the agent's words, set apart, where the field is set from a parameter; otherwise as the
 * sentence (`scalarText`) or, in a table cell (`cell`), as `Val` shows it.
 */
export function SetValue(props: { field: string; value: unknown; types: FieldTypes; agentFields: ReadonlySet<string>; cell?: boolean }) {
  if (props.agentFields.has(props.field)) return <AgentWords value={props.value} />
  return props.cell ? <Val value={props.value} type={props.types[props.field]} /> : <>{scalarText(props.value, props.types[props.field])}</>
}

/**
 * The targets the write would skip (failing the precondition as frozen; a compensation's no longer holding what the
 * operation wrote), as the summary tallied them apart. 0 for a plan proposed before they were told apart.
 */
export function skippedTargets(plan: PlanView): number {
  return Math.max(0, ...plan.changes.summary.map((s) => s.skipped ?? 0))
}

/** How many of the written targets already hold a uniform set value, so a value nobody's record changes to is not read as a change. */
export function alreadyHeld(unchanged: number, written: number, skipped: number): string {
  if (unchanged === 0 || written === 0) return ''
  if (unchanged >= written) return written === 1 ? (skipped > 0 ? ' (the record written already holds it)' : ' (the record already holds it)') : ` (all ${count(written)}${skipped > 0 ? ' written' : ''} already hold it)`
  return ` (${count(unchanged)} already hold${unchanged === 1 ? 's' : ''} it)`
}

/** After "every one gets the same change": how many of them it actually changes, and why the others not. */
function UnchangedSentence(props: { plan: PlanView }) {
  const changing = props.plan.changes.changing
  const said = unchangedWords(props.plan, count)
  if (changing === null || said === '') return null
  return <>{` Of them, ${said}: ${plural(changing, 'record')} actually change${changing === 1 ? 's' : ''}.`}</>
}

/**
 * The records a change summary's listed values leave out, counted: it lists at most 50 distinct values per field,
 * so a value that differs per record (a template naming the record) lists 50 lines of "(1)" for hundreds of
 * targets, which read as the whole effect unless the rest is said with its number.
 */
function otherValues(listed: readonly ValueCount[], targets: number): string {
  const rest = targets - listed.reduce((n, v) => n + v.count, 0)
  return rest > 0 ? `, and other values (${plural(rest, 'record')})` : ''
}

type EffectProps = { plan: PlanView; types: FieldTypes; agentFields: ReadonlySet<string> }

function SetList(props: EffectProps & { arrow: string }) {
  return (
    <>
      {props.plan.changes.summary.map((s, i) => (
        <>
          {i > 0 ? '; ' : ''}
          <code>{s.field}</code>
          {props.arrow}
          <SetValue field={s.field} value={s.after} types={props.types} agentFields={props.agentFields} />
        </>
      ))}
    </>
  )
}

/**
 * The headline over the per-field table. Where some targets would be skipped it says how many are written: "every
 * one of the 59 records gets the same change: state → overdue" read as 59 invoices becoming overdue where 44 fail
 * the precondition and are never written.
 */
export function EffectHeadline(props: EffectProps) {
  const p = props.plan
  if (!p.changes.uniform || p.changes.summary.length === 0) return <p>Records receive different values; each record's before → after is in the manifest above.</p>
  const skipped = skippedTargets(p)
  const one = skipped === 1
  const why = p.precondition.per_target
    ? `${one ? 'it no longer holds' : 'they no longer hold'} what the operation wrote`
    : `${one ? 'it fails' : 'they fail'} the precondition as frozen`
  if (skipped >= p.target_count)
    return (
      <p data-testid="uniform-summary">
        <strong>
          None of the {plural(p.target_count, 'record')} is written: every one would be skipped ({why}). Committing would write nothing.
        </strong>
      </p>
    )
  if (skipped > 0) {
    const written = p.target_count - skipped
    const held = unchangedTargets(p)?.held ?? 0
    return (
      <p data-testid="uniform-summary">
        <strong>
          {`${count(written)} of the ${plural(p.target_count, 'record')} ${written === 1 ? 'is' : 'are'} written, each with the same change: `}
          <SetList {...props} arrow=" → " />
          {`. ${plural(skipped, 'record')} would be skipped, not written: ${why}.`}
        </strong>
        {held > 0 && p.changes.changing !== null ? ` Of those written, ${count(held)} already hold${held === 1 ? 's' : ''} every value it sets: ${plural(p.changes.changing, 'record')} actually change${p.changes.changing === 1 ? 's' : ''}.` : ''}
      </p>
    )
  }
  if (p.changes.changing === 0 && p.precondition.failing_now === 0)
    return (
      <p data-testid="uniform-summary">
        <strong>
          None of the {plural(p.target_count, 'record')} changes: every one already holds <SetList {...props} arrow=" = " />. Committing would write nothing new.
        </strong>
      </p>
    )
  return (
    <p data-testid="uniform-summary">
      <strong>
        Every one of the {plural(p.target_count, 'record')} gets the same change: <SetList {...props} arrow=" → " />.
      </strong>
      <UnchangedSentence plan={p} />
    </p>
  )
}

/** A field's values with their counts, and the records the listed ones leave out. */
function Counted(props: { list: readonly ValueCount[]; complete: boolean | undefined; total: number; type: FieldTypes[string] | undefined }) {
  return (
    <>
      {props.list.map((b, i) => (
        <>
          {i > 0 ? ', ' : ''}
          <Val value={b.value} type={props.type} /> ({count(b.count)})
        </>
      ))}
      {props.complete === false ? otherValues(props.list, props.total) : ''}
    </>
  )
}

/**
 * Before → after per field over the records written; the values of those that would be skipped in their own
 * column, labelled so: in the before column they read as records about to change.
 */
export function EffectTable(props: EffectProps) {
  const p = props.plan
  const skipped = skippedTargets(p)
  const written = p.target_count - skipped
  const columns = [
    'Field',
    skipped > 0 ? 'Now (as frozen), records written' : 'Now (as frozen), records',
    'After',
    { num: 'Already at the after value' },
    ...(skipped > 0 ? ['Not written (would be skipped), records now'] : []),
  ]
  return (
    <DataTable label="Before and after, per field" testid="effect" caption="Before → after for every field that changes" columns={columns}>
      {p.changes.summary.map((s: FieldSummary) => (
        <tr>
          <th scope="row">
            <code>{s.field}</code>
          </th>
          <td>{written === 0 && skipped > 0 ? 'none written' : <Counted list={s.before} complete={s.before_complete} total={written} type={props.types[s.field]} />}</td>
          <td>
            {s.after_values ? (
              <>
                {s.after_values.map((a, i) => (
                  <>
                    {i > 0 ? ', ' : ''}
                    <strong>
                      <SetValue field={s.field} value={a.value} types={props.types} agentFields={props.agentFields} cell />
                    </strong>{' '}
                    ({count(a.count)})
                  </>
                ))}
                {otherValues(s.after_values, written > 0 ? written : p.target_count)}
              </>
            ) : (
              <strong>
                <SetValue field={s.field} value={s.after} types={props.types} agentFields={props.agentFields} cell />
              </strong>
            )}
          </td>
          <td class="num">{count(s.unchanged)}</td>
          {skipped > 0 ? (
            <td data-testid="skipped-before">
              <Counted list={s.skipped_before ?? []} complete={s.skipped_before_complete} total={s.skipped ?? 0} type={props.types[s.field]} />
            </td>
          ) : null}
        </tr>
      ))}
    </DataTable>
  )
}

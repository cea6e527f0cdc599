import { REASON_TEXT } from '../contract/index.js'
import { type PlanProposal, type PlanView, unchangedWords, withdrawnApprovalSentences } from '../plans/index.js'
import type { SelectionView } from '../selections/index.js'
import { lookalikeLines } from './render-lookalikes.js'
import { cellText as cell, columnWidth, fitted } from './table-cell.js'

/** A selection for a terminal: completeness first, then count, digest, exclusions with counts, groups, records. */
export function renderSelection(view: SelectionView, maxRows = 20): string {
  const lines: string[] = []
  const where = `${view.resource} in ${view.environment}`
  if (view.complete) lines.push(`COMPLETE: selection ${view.selection_id} froze ${view.count} record(s) of ${where}.`)
  else {
    lines.push(`INCOMPLETE: selection ${view.selection_id} froze ${view.count} record(s) of ${where}, and more may match. complete: false`)
    lines.push('It can be reviewed, NEVER committed. Why:')
    // a reason's message may quote the upstream (a 503's body): escaped as a table cell, never interpreted
    for (const r of view.incomplete_reasons) lines.push(`  - ${r.code}${r.limit ? ` (${r.limit.name}=${r.limit.value})` : ''}: ${cell(r.message || REASON_TEXT[r.code])}`)
    if (view.recovery) lines.push(`Recovery: ${cell(view.recovery.message)}: POST ${view.recovery.path}`)
  }
  if (view.recovery_of)
    lines.push(`Recovers selection ${view.recovery_of}: the explicit ids it returned (${view.complete ? 'every one read again' : `its own walk did not read them all: recover ${view.recovery_of} again`}).`)
  // `warrant recover` asked again: the answer is the recovery made before, not a new read of the records
  if ('created' in view && view.created === false)
    lines.push(
      view.recovery_of
        ? `(${view.recovery_of} was already recovered: selection ${view.selection_id}, made earlier by this principal, is returned; nothing was read again)`
        : `(ALREADY CREATED with this idempotency key: selection ${view.selection_id}, made earlier by this principal with the same request, is returned; nothing was read again. To walk again, use a new key)`,
    )
  lines.push(`  count:    ${view.count}`)
  lines.push(`  digest:   ${view.digest}`)
  lines.push(`  expires:  ${view.expires_at}${view.state === 'expired' ? ' (EXPIRED)' : ''}`)
  lines.push(`  snapshot: ${view.consistent_snapshot ? `consistent (${view.scope.snapshot})` : 'NOT consistent: each batch is re-read before it is written at commit'}`)
  // the filter's values are the caller's: JSON escapes control characters, cell the unseen ones JSON leaves as they are
  lines.push(`  selector: ${cell(JSON.stringify(view.selector.filter))}`)
  for (const w of view.warnings) lines.push(`Warning ${w.code}: ${cell(w.message)}`)
  lines.push(...lookalikeLines(view.lookalike_ids, 'a plan on it would change'))
  lines.push('')
  if (view.exclusions.length === 0) lines.push('Exclusions: none (no exclusion rule was given)')
  else {
    lines.push('Exclusions (a record matching several rules is listed under the first it matches):')
    const width = Math.max(...view.exclusions.map((e) => e.rule.length))
    for (const e of view.exclusions) lines.push(`  ${e.rule.padEnd(width)}  ${String(e.count).padStart(6)}  ${cell(JSON.stringify(e.filter))}  ${e.records_url}`)
  }
  if (view.groups.length > 0) {
    // counts over an incomplete walk cover what it returned, never the records it did not reach
    lines.push(view.complete ? 'Groups:' : `Groups (only the ${view.count} record(s) the incomplete walk returned; records it never reached may hold any value):`)
    for (const g of view.groups) {
      const unlisted = g.distinct - g.values.length
      // a bare label reads as a list that failed to print: none is said in words
      if (g.values.length === 0 && unlisted === 0) lines.push(`  ${g.field}: none (no member)`)
      else lines.push(`  ${g.field}: ${g.values.map((v) => `${cell(v.value)} ${v.count}`).join(', ')}${unlisted === 0 ? '' : ` … and ${g.other_count} more in ${unlisted} other value(s)`}`)
    }
  }
  if (view.records.length > 0) {
    lines.push('', `Records (first ${Math.min(maxRows, view.records.length)} of ${view.count}, in frozen order):`)
    const columns = view.fields
    const rows = view.records.slice(0, maxRows).map((r) => columns.map((c) => cell(r.fields[c])))
    const widths = columns.map((c, i) => columnWidth(c, rows.map((row) => row[i]!)))
    const line = (cells: readonly string[]) => `  ${cells.map((v, i) => fitted(v, widths[i]!)).join('  ')}`
    lines.push(line(columns), ...rows.map(line))
    if (view.count > maxRows) lines.push(`  … the whole manifest: GET ${view.export_urls.csv} (or --json and the records cursor)`)
  }
  lines.push('')
  lines.push(view.committable ? `Next: warrant plan ${view.selection_id} --action TYPE --param k=v` : `This selection cannot be committed (${view.upstream_moved ?? (view.complete ? `state ${view.state}` : 'incomplete inventory')}).`)
  return lines.join('\n')
}

/** A plan for a terminal: where, what, on how many, before → after, what approval it needs. */
export function renderPlan(plan: PlanView | PlanProposal): string {
  const lines: string[] = []
  lines.push(`PLAN ${plan.plan_id} (${plan.state}): ${plan.action.type} on ${plan.target_count} record(s) of ${plan.resource} in ${plan.environment}`)
  if (!plan.selection.complete)
    lines.push(
      `INCOMPLETE selection ${plan.selection_id}: more records may match than these ${plan.target_count}. complete: false`,
      'This plan can be reviewed, NEVER approved or committed. To act on the records that were returned:',
      `  warrant recover ${plan.selection_id}   (a complete selection of exactly those records), then plan on it`,
    )
  for (const d of plan.config_drift) lines.push(`CANNOT RUN (${d.code}): ${cell(d.message)}. It can be rejected, not approved or committed while the config differs; an approval given before does not count again if the config is put back.`)
  if ('created' in plan && !plan.created) lines.push('(this action was already proposed on this selection: the existing plan)')
  lines.push(...lookalikeLines(plan.lookalike_ids, 'this plan changes'))
  lines.push(`  plan digest:  ${plan.plan_digest}`)
  lines.push(`  selection:    ${plan.selection_id} (${plan.selection_digest}), expires ${plan.expires_at}`)
  lines.push(`  action:       ${plan.action.type}: ${plan.action.description}`)
  // the parameters are the agent's, labelled so on their own line and each quoted, so none reads as this output's
  // words; escaped as cells, since JSON leaves zero-width, bidi and look-alike letters as they are
  const params = Object.entries(plan.action.params)
  // a compensation's parameters are the gateway's, drawn from the operation it undoes: no agent wrote them
  const whose = plan.precondition.per_target ? 'set by Warrant from the operation' : "the agent's words"
  if (params.length > 0) lines.push(`  parameters:   ${whose}: ${params.map(([k, v]) => `${k} = ${cell(JSON.stringify(v))}`).join(', ')}`)
  // a compensation's precondition is per target (the value the operation wrote): its empty filter read "{}, and 2 fail it"
  const precondition = plan.precondition.per_target ? 'each record still holds what the operation wrote (judged per target)' : JSON.stringify(plan.precondition.filter)
  lines.push(`  precondition: ${precondition}${plan.precondition.failing_now ? ` (${plan.precondition.failing_now} member(s) already fail it and would be skipped)` : ''}`)
  lines.push(`  reversible:   ${plan.reversible ? 'yes' : 'NO'}`)
  const limits = plan.run_limits
  lines.push(
    limits === null
      ? '  run limits:   NOT BOUND (proposed before plans bound them): the execution config at commit'
      : `  run limits:   ${limits.concurrency} at once${windowOf(limits.write_window)}, ${limits.max_writes_per_second === null ? 'no rate bound' : `${limits.max_writes_per_second}/s`}, batches of ${limits.batch_size}; halts after ${limits.halt_after_consecutive_errors} errors in a row, ${limits.halt_after_validation_failures} validation failures, a Retry-After over ${limits.max_retry_after_seconds} s`,
  )
  if (plan.target_count === 0 && plan.changes.summary.length === 0) lines.push('Changes: none (the plan has no target)')
  else lines.push(`Changes${sameChange(plan.changes.uniform, plan.changes.summary)}:`)
  const changing = plan.changes.changing
  if (changing !== null && plan.target_count > 0 && changing < plan.target_count)
    lines.push(changing === 0 ? `  NO RECORD CHANGES: ${unchangedWords(plan)}` : `  ${changing} of ${plan.target_count} record(s) change; ${unchangedWords(plan)}`)
  for (const s of plan.changes.summary) lines.push(`  ${s.field}: ${fieldChange(s)}`)
  lines.push(`Approval: ${plan.approval.required} — ${plan.approval.reason}`)
  for (const a of plan.approval_state.approved_by) lines.push(`  approved by ${cell(a.name ?? a.principal)} at ${a.approved_at}, valid until ${a.expires_at}`)
  // an approval withdrawn (a token revoked, a principal disabled) is said, with why: "still needed: 1" alone read as if nobody had approved
  for (const line of withdrawnApprovalSentences(plan.approvals)) lines.push(`  NO LONGER COUNTS: ${cell(line)}`)
  if (plan.approval_state.expired) lines.push(`  APPROVAL EXPIRED at ${plan.approval_state.expired_at}: a reviewer must approve again before a commit`)
  if (plan.approval_state.rejected_by) lines.push(`  REJECTED by ${cell(plan.approval_state.rejected_by.name ?? plan.approval_state.rejected_by.principal)}`)
  if (!plan.selection.complete) lines.push(`  who can approve: ${plan.approval_state.who_can_approve}`)
  else if (plan.approval_state.still_needed > 0) lines.push(`  still needed: ${plan.approval_state.still_needed} distinct reviewer(s): warrant approve ${plan.plan_id} --digest ${plan.plan_digest} --token-file REVIEWER_TOKEN`)
  // no link where no review pages are served (this CLI serves none): where a person reviews it
  lines.push(`Review: ${plan.review_url ?? plan.review_hint}`)
  return lines.join('\n')
}

/** "every record gets the same change", of the records written where some would be skipped; nothing where none is written. */
function sameChange(uniform: boolean, summary: PlanView['changes']['summary']): string {
  if (!uniform || summary.some((s) => s.skipped && s.before.length === 0)) return ''
  return summary.some((s) => s.skipped) ? ' (every record written gets the same change)' : ' (every record gets the same change)'
}

/**
 * One field's before → after over the written targets, then the values of those that would be skipped, apart: listed
 * before the arrow, "paid" (17) → "overdue" read as paid invoices becoming overdue. Where none is written, no arrow.
 */
function fieldChange(s: PlanView['changes']['summary'][number]): string {
  // before-values are the upstream's: JSON escapes control characters, cell the overrides JSON leaves as they are
  const values = (list: readonly { readonly value: unknown; readonly count: number }[], complete: boolean | undefined = true) =>
    `${list.map((b) => `${cell(JSON.stringify(b.value))} (${b.count})`).join(', ')}${complete ? '' : ', and other values'}`
  const skipped = s.skipped ? `; not written (would be skipped): ${values(s.skipped_before ?? [], s.skipped_before_complete)}` : ''
  if (s.skipped && s.before.length === 0) return `nothing written${skipped}`
  const after = s.after_values ? s.after_values.map((v) => `${cell(v.value)} (${v.count})`).join(', ') : cell(JSON.stringify(s.after))
  return `${values(s.before, s.before_complete)} → ${after}${s.unchanged ? `; ${s.unchanged} already hold it` : ''}${skipped}`
}

/** A sql resource's bound write_window beside the concurrency: that many targets go in one UPDATE, so in flight. */
function windowOf(window: number | null | undefined): string {
  if (window === undefined) return ''
  return window === null ? ' (sql: that many targets per statement)' : ` (sql: ${window} targets per statement, write_window)`
}

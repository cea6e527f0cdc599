import { decide, type Envelope, REASON_TEXT } from '../contract/index.js'
import { cellText, columnWidth, fitted } from './table-cell.js'

/**
 * The terminal view of an envelope: completeness first, in words, then the records, then how to continue.
 * A person reading it cannot mistake a partial list for the whole.
 */
/** What a printed command changes of the search that was run: the cursor to resume with, a longer deadline. */
export interface ResumeChange {
  readonly cursor?: string
  readonly deadlineMs?: number
}

export function renderEnvelope(envelope: Envelope, options: { readonly resumeCommand?: (change: ResumeChange) => string; readonly maxRows?: number } = {}): string {
  const lines: string[] = []
  const n = envelope.items.length
  const where = `${envelope.scope.resource} in ${envelope.scope.environment}`
  // A continued walk speaks of the whole walk: this part's count alone is not what the walk found.
  const total = envelope.page.walk_returned
  const found = total === undefined ? n : total
  if (envelope.complete) {
    if (total === undefined) lines.push(`COMPLETE: ${n} matching record(s) in ${where}; the whole scope was examined.`)
    else lines.push(`COMPLETE: the walk found ${total} matching record(s) in ${where} in all its parts (${n} returned by this call, the rest by the earlier ones); the whole scope was examined.`)
    if (found === 0)
      lines.push(
        decide(envelope, 'prove_absence').decision === 'proceed'
          ? 'Nothing matched, and because the result is complete, that proves absence within the scope.'
          : 'Nothing matched, but the walk had no snapshot and could not prove the data held still: that does not prove absence.',
      )
  } else {
    if (total === undefined) lines.push(`INCOMPLETE: ${n} record(s) returned from ${where}, and more may exist. complete: false`)
    else lines.push(`INCOMPLETE: ${n} record(s) returned by this call, ${total} so far by the whole walk, from ${where}, and more may exist. complete: false`)
    for (const r of envelope.incomplete_reasons) {
      const extra = [r.source ? `source ${r.source}` : null, r.limit ? `${r.limit.name}=${r.limit.value}` : null].filter(Boolean).join(', ')
      // a reason's message may quote the upstream (a 503's body): escaped as a table cell, never interpreted
      lines.push(`  - ${r.code}${extra ? ` (${cellText(extra)})` : ''}: ${cellText(r.message || REASON_TEXT[r.code])}`)
    }
    if (found === 0) lines.push('An empty INCOMPLETE result proves nothing about absence.')
  }
  lines.push(
    `Snapshot: ${envelope.scope.consistent_snapshot ? `consistent (${envelope.scope.snapshot})` : envelope.scope.stability === 'proven' ? 'none, but the walk proved no record moved past it unseen' : 'not consistent: records may have moved during the walk'}`,
  )
  for (const w of envelope.warnings) lines.push(`Warning ${w.code}: ${cellText(w.message)}`)
  lines.push(`Visibility: ${envelope.scope.visibility}`)
  if (n > 0) {
    lines.push('')
    lines.push(...table(envelope.items, options.maxRows ?? 20))
  }
  const c = envelope.continuation
  if (c) {
    lines.push('')
    if (c.kind === 'narrow_query') lines.push(`Narrow the query: ${cellText(c.message)}`)
    else lines.push(...continueWith(c, options.resumeCommand))
  }
  // Said where it decides something: an empty result (is the absence proven?) or an incomplete one (it is not).
  if (found === 0 || !envelope.complete) {
    lines.push('')
    lines.push(`For a change based on absence: ${decide(envelope, 'change_from_absence').decision}.`)
  }
  return lines.join('\n')
}

/**
 * One instruction and the command that carries it out: the cursor when there is one, and the deadline the words
 * ask for (a printed command without `--deadline-ms` walked under the default one). Without a cursor the walk
 * cannot be resumed: the instruction is to run the same search again, and the command has no `--cursor`.
 */
function continueWith(c: Exclude<NonNullable<Envelope['continuation']>, { kind: 'narrow_query' }>, resumeCommand: ((change: ResumeChange) => string) | undefined): string[] {
  const cursor = c.cursor
  const deadlineMs = c.kind === 'retry_with_deadline' ? c.minimum_deadline_ms : undefined
  const how = cursor === undefined ? 'Run the same search again (no cursor resumes this walk)' : c.kind === 'retry_with_deadline' ? 'Continue' : 'Continue the same walk'
  // one instruction per continuation: a wait named beside "continue now" would read as two ways to go on
  const when = c.kind === 'retry_after' ? ` after ${c.not_before} (in ${c.retry_after_seconds}s)` : ''
  const words = c.kind === 'retry_with_deadline' ? `${how} with a deadline of at least ${c.minimum_deadline_ms} ms:` : `${how}${when} with:`
  const change: ResumeChange = { ...(cursor === undefined ? {} : { cursor }), ...(deadlineMs === undefined ? {} : { deadlineMs }) }
  const command = resumeCommand ? resumeCommand(change) : cursor
  // no command to print (no cursor, no way to spell the search): the words alone, never an empty line
  return command === undefined ? [words.replace(/( with)?:$/, '.')] : [words, `  ${command}`]
}

function table(items: readonly Record<string, unknown>[], maxRows: number): string[] {
  const columns = Object.keys(items[0] ?? {})
  const rows = items.slice(0, maxRows).map((item) => columns.map((c) => cellText(item[c])))
  const widths = columns.map((c, i) => columnWidth(c, rows.map((r) => r[i]!)))
  const line = (cells: readonly string[]) => cells.map((v, i) => fitted(v, widths[i]!)).join('  ')
  const out = [line(columns), ...rows.map(line)]
  if (items.length > maxRows) out.push(`… and ${items.length - maxRows} more record(s) in this result (use --json for all of them)`)
  return out
}

import type { CheckReport, GuaranteeStatus } from './guarantee.js'

/**
 * `warrant check`'s exit statuses, by verdict: 0 every guarantee holds; 4 the probe could not tell (an
 * upstream did not answer); 5 a guarantee does not hold but Warrant fails closed (answers say not complete,
 * writes are refused); 6 unsafe: a false `complete` or a destructive write is possible.
 */
export const CHECK_EXIT_CODES: Readonly<Record<CheckReport['verdict'], number>> = { holds: 0, unknown: 4, fails_closed: 5, unsafe: 6 }

const LABEL: Record<GuaranteeStatus, string> = { holds: 'holds', warning: 'WARNING', fails_closed: 'BROKEN', unsafe: 'UNSAFE', unknown: 'unknown', not_applicable: 'n/a' }

const VERDICT: Record<CheckReport['verdict'], string> = {
  holds: 'every guarantee holds on what was read',
  unknown: 'some guarantees could not be checked',
  fails_closed: 'some guarantees do not hold; Warrant fails closed on them (answers say not complete, writes are refused), but the config or the upstream needs fixing',
  unsafe: 'UNSAFE: with this configuration a false "complete" or a destructive write is possible',
}

/** A table a person reads: guarantee, status, what was seen, and the config lines to fix. */
export function renderCheckReport(report: CheckReport): string {
  const rows = report.guarantees.map((g) => [g.name, LABEL[g.status], g.detail, g.config_keys.join(', ')])
  const header = ['guarantee', 'status', 'seen', 'config lines']
  const widths = [0, 1].map((i) => Math.max(header[i]!.length, ...rows.map((r) => r[i]!.length)))
  const line = (cells: string[]) => `${cells[0]!.padEnd(widths[0]!)}  ${cells[1]!.padEnd(widths[1]!)}  ${cells[2]}${cells[3] ? `  [fix: ${cells[3]}]` : ''}`
  const warnings = report.guarantees.filter((g) => g.status === 'warning').length
  return [
    `check ${report.resource} (${report.connector}): ${VERDICT[report.verdict]}${warnings === 0 ? '' : ` (${warnings} warning${warnings === 1 ? '' : 's'}: see below)`}`,
    '',
    line(header.slice(0, 3).concat('')),
    ...rows.map(line),
  ].join('\n')
}

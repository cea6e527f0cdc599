import type { Command } from 'commander'
import { WarrantError } from '../../contract/index.js'
import { askedAgainText, beforeLabel, FINISHED_STATES, TARGET_STATES, waitWords, type OperationView, type TargetResult, type TargetState } from '../../operations/index.js'
import { cliActor, type TokenFlags, withPrincipalOptions } from '../cli-actor.js'
import { withCliGateway } from '../open-cli-gateway.js'
import { positiveInteger } from '../option-values.js'
import { EXIT } from '../exit-status.js'
import { createProgress } from '../progress.js'
import { watchOperation } from '../watch-operation.js'
import { cellText } from '../table-cell.js'

/** An operation in a few lines: where, what, the state, and every outcome counted separately. */
export function renderOperation(op: OperationView): string {
  const c = op.counts
  const finished = FINISHED_STATES.has(op.state)
  const lines = [
    `operation ${op.operation_id}  (plan ${op.plan_id})`,
    `  ${op.resource ?? '?'} in ${op.environment ?? '?'}: ${op.action ? `${op.action.type} ${JSON.stringify(op.action.params)}` : '?'}`,
    `  state: ${op.state}${finished ? '' : ' (not finished)'}`,
    `  targets: ${op.target_count}: succeeded ${c.succeeded}, failed ${c.failed}, skipped ${c.skipped}, unknown ${c.unknown}, pending ${c.pending}, in flight ${c.in_flight}`,
  ]
  // always said, none included: a reviewer reading why an operation was slow must not have to guess from a missing line;
  // in the upstream's terms (a sql resource's waits are its database's locks, never a 429)
  const words = waitWords(op.rate_limit_kind)
  lines.push(
    op.rate_limit_hits > 0
      ? `  ${words.label}: ${words.answered} ${op.rate_limit_hits} time(s) on ${op.rate_limited_targets} target(s); ${words.each} and ${askedAgainText(op)}`
      : `  ${words.label}: never (${words.never})`,
  )
  // the upstream's or the connector's words, escaped as the halt's are
  if (op.paused)
    lines.push(`  PAUSED until ${op.paused.until}: ${words.paused} (${cellText(op.paused.reason)}); no write is sent before then`)
  // the halt names a record id and quotes the upstream's last error: escaped, so neither draws lines of its own
  if (op.halt_reason)
    lines.push(
      `  HALTED by stop rule ${op.halt_reason.rule}${op.halt_reason.target_id ? ` at ${cellText(op.halt_reason.target_id)} (ord ${op.halt_reason.ord})` : ''}: ${cellText(op.halt_reason.message)}`,
      '  later targets stay pending: they were not written',
    )
  if (c.unknown > 0) lines.push(`  ${c.unknown} unknown: no durable answer; never retried blindly. Review them, then: warrant operation reconcile ${op.operation_id}`)
  // a follow-up already proposed: where it is, so nobody proposes it again to find it
  for (const [kind, f] of [['the rest', op.follow_ups.remainder], ['compensation', op.follow_ups.compensation]] as const)
    if (f) lines.push(`  ${kind}: plan ${f.plan_id} (${f.state})${f.operation_id ? `, run as operation ${f.operation_id}` : ''}`)
  lines.push(`  results: warrant operation results ${op.operation_id} [--outcome failed|skipped|unknown|…]  (HTTP ${op.results_url})`)
  return lines.join('\n')
}

/** 0 every target succeeded; 3 it finished otherwise (skips, failures, unknowns, a halt); 5 not finished yet. */
export function operationExitStatus(op: OperationView): number {
  if (!FINISHED_STATES.has(op.state)) return EXIT.incomplete
  return op.state === 'succeeded' ? EXIT.ok : EXIT.refused
}

/** One result on one line: the id, the reason and the upstream's error are its text, escaped as table cells are. */
function renderResult(r: TargetResult): string {
  // nothing written: "→ null" read as a change to null; say what the values are instead
  const change = r.after ? `  ${cellText(JSON.stringify(r.before))} → ${cellText(JSON.stringify(r.after))}` : r.before ? `  ${beforeLabel(r.outcome)}: ${cellText(JSON.stringify(r.before))}` : ''
  const why = cellText([r.reason && r.reason_text ? `${r.reason} (${r.reason_text})` : r.reason, r.upstream_status === null ? null : `upstream ${r.upstream_status}`, r.rate_limit_hits > 0 ? `rate limited ${r.rate_limit_hits}x` : null, r.error].filter(Boolean).join('; '))
  return `${String(r.ord).padStart(7)}  ${cellText(r.id)}  ${r.outcome.padEnd(9)}${why ? `  ${why}` : ''}${change}`
}

export function registerOperation(program: Command): void {
  const operation = program.command('operation').description('committed operations: state, per-target results, reconciliation')

  withPrincipalOptions(operation.command('show <operation_id>').description('state, counts per outcome, halt reason'))
    .option('--json', 'print as JSON')
    .action(async (id: string, flags: TokenFlags & { config?: string; json?: boolean }) => {
      await withCliGateway({ ...flags, readOnly: true }, async (gateway) => {
        const view = await gateway.operations.get(await cliActor(gateway, flags), id)
        process.stdout.write(flags.json ? `${JSON.stringify(view, null, 2)}\n` : `${renderOperation(view)}\n`)
        // as watch and commit --wait: a script reading `show` must not take a partial operation for a whole one
        process.exitCode = operationExitStatus(view)
      })
    })

  withPrincipalOptions(operation.command('watch <operation_id>').description('follow an operation to its end with a progress line on stderr, then print it'))
    .option('--timeout-ms <n>', 'stop watching after this long (the operation goes on); exit 5 if it has not finished', positiveInteger('--timeout-ms'))
    .option('-q, --quiet', 'no progress line')
    .option('--json', 'print the final view as JSON')
    .action(async (id: string, flags: TokenFlags & { config?: string; timeoutMs?: number; quiet?: boolean; json?: boolean }) => {
      await withCliGateway({ ...flags, readOnly: true }, async (gateway) => {
        await gateway.operations.get(await cliActor(gateway, flags), id)
        const view = await watchOperation(gateway, id, { timeoutMs: flags.timeoutMs ?? 24 * 3_600_000, progress: createProgress({ quiet: flags.quiet }) })
        process.stdout.write(flags.json ? `${JSON.stringify(view, null, 2)}\n` : `${renderOperation(view)}\n`)
        process.exitCode = operationExitStatus(view)
      })
    })

  withPrincipalOptions(operation.command('results <operation_id>').description('per-target outcomes in member order; exit 5 while more pages remain (--all reads them all)'))
    .option('--outcome <outcome>', `only ${TARGET_STATES.join(', ')}`)
    .option('--limit <n>', 'results per page (default 100)', positiveInteger('--limit'))
    .option('--cursor <cursor>', 'continue after a previous page')
    .option('--all', 'every page, to the end')
    .option('--json', 'print JSON lines, one result each')
    .action(async (id: string, flags: TokenFlags & { config?: string; outcome?: string; limit?: number; cursor?: string; all?: boolean; json?: boolean }) => {
      if (flags.outcome !== undefined && !(TARGET_STATES as readonly string[]).includes(flags.outcome))
        throw new WarrantError('invalid_request', `--outcome must be one of ${TARGET_STATES.join(', ')}, not "${flags.outcome}"`)
      await withCliGateway({ ...flags, readOnly: true }, async (gateway) => {
        const actor = await cliActor(gateway, flags)
        let cursor = flags.cursor
        let listed = 0
        for (;;) {
          const page = await gateway.operations.results(actor, id, {
            ...(flags.outcome ? { outcome: flags.outcome as TargetState } : {}),
            ...(cursor ? { cursor } : {}),
            ...(flags.limit ? { limit: flags.limit } : {}),
          })
          for (const r of page.results) process.stdout.write(`${flags.json ? JSON.stringify(r) : renderResult(r)}\n`)
          listed += page.results.length
          if (!page.next_cursor) {
            // nothing printed reads the same as a command that broke: a person is told there is none (JSON lines: none)
            if (listed === 0 && !flags.json)
              process.stdout.write(`no results${flags.outcome ? ` with outcome ${flags.outcome}` : ''}: operation ${id}${flags.cursor ? ' has none after this cursor' : ' has none to list'}\n`)
            break
          }
          if (!flags.all) {
            process.stderr.write(
              `more results: warrant operation results ${id}${flags.outcome ? ` --outcome ${flags.outcome}` : ''}${flags.limit ? ` --limit ${flags.limit}` : ''} --cursor ${page.next_cursor}  (or --all)\n`,
            )
            // one page of several is not the list: a script must not take it for every result
            process.exitCode = EXIT.incomplete
            break
          }
          cursor = page.next_cursor
        }
      })
    })

  registerReconcile(operation.command('reconcile <operation_id>'))
}

/** `warrant reconcile OP` and `warrant operation reconcile OP`: the same command under both names. */
export function registerReconcile(command: Command): void {
  withPrincipalOptions(command.description('re-read every unknown target and record what the upstream holds now (never writes)'))
    .option('--json', 'print as JSON')
    .action(async (id: string, flags: TokenFlags & { config?: string; json?: boolean }) => {
      await withCliGateway(flags, async (gateway) => {
        const report = await gateway.operations.reconcile(await cliActor(gateway, flags), id)
        if (flags.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`)
        else {
          const settling = report.settling > 0 ? `  ${report.settling} still at their version but may still land (settle window): reconcile again after ${report.settles_at}\n` : ''
          const corrected = report.corrected > 0 ? `  ${report.corrected} earlier "not applied" corrected to succeeded: the write landed late\n` : ''
          process.stdout.write(
            `reconciled ${report.examined} unknown target(s): ${report.succeeded} succeeded, ${report.failed} failed, ${report.still_unknown} still unknown\n${settling}${corrected}${renderOperation(report.operation)}\n`,
          )
        }
        // as operation show: targets still unknown (or failed) leave an operation that is not whole
        process.exitCode = operationExitStatus(report.operation)
      })
    })
}

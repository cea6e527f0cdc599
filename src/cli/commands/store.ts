import type { Command } from 'commander'
import { sweepRetention } from '../../gateway/index.js'
import type { PrunedSelection, PruneReport } from '../../selections/index.js'
import { parseAgeOption } from '../age-option.js'
import { noteCliDetails } from '../cli-audit.js'
import { openCliGateway } from '../open-cli-gateway.js'

type PruneFlags = { olderThan?: string; dryRun?: boolean; json?: boolean; config?: string }

/**
 * `warrant store prune [--older-than 30d] [--dry-run]`: the retention sweep. Deletes the members and excluded records
 * of selections expired at least that long that no approved, committed or executed plan stands on (those are evidence,
 * kept forever); each selection's row (count, digest, timestamps) stays, and every read of its members then says they
 * were pruned (410 expired, reason members_pruned). The default age is the config's retention.prune_members_after_days.
 */
export function registerStore(program: Command): void {
  const store = program.command('store').description('the store: retention')
  store
    .command('prune')
    .description('delete the member rows of selections expired long ago that no approved, committed or executed plan stands on; their selection rows are kept')
    .option('--older-than <age>', 'expired at least this long ago: whole days or hours (30d, 12h); default retention.prune_members_after_days of the config')
    .option('--dry-run', 'list what would be pruned; change nothing')
    .option('-c, --config <file>', 'config file')
    .option('--json', 'print the sweep as JSON')
    .action(async (flags: PruneFlags) => {
      // refused before the store is opened: a bad age changes nothing
      const given = flags.olderThan === undefined ? null : parseAgeOption(flags.olderThan, '--older-than')
      const { gateway, config } = await openCliGateway({ config: flags.config, readOnly: flags.dryRun === true })
      try {
        const olderThanMs = given ?? config.retention.prune_members_after_days * 86_400_000
        const report = await sweepRetention(gateway, { olderThanMs, dryRun: flags.dryRun === true, actor: null, surface: 'cli' })
        noteCliDetails({ dry_run: report.dry_run, older_than_ms: olderThanMs, selections: report.selections, members: report.members, excluded: report.excluded })
        process.stdout.write(flags.json ? `${JSON.stringify(report, null, 2)}\n` : said(report, given === null ? `${config.retention.prune_members_after_days}d` : flags.olderThan!))
      } finally {
        await gateway.close()
      }
    })
}

/** The sweep in words, ending with one line that sums it up: what was pruned (new and finished), how many rows, what was kept and why. */
function said(report: PruneReport, age: string): string {
  const verb = report.dry_run ? 'would prune' : 'pruned'
  const listed = (p: PrunedSelection) => `  ${p.selection_id}  expired ${p.expires_at}  ${p.members} member(s)  ${p.excluded} excluded`
  const rows = (members: number, excluded: number) => `${members} member row(s), ${excluded} excluded-record row(s)`
  const finished = report.finished.reduce((sum, p) => ({ members: sum.members + p.members, excluded: sum.excluded + p.excluded }), { members: 0, excluded: 0 })
  const lines = [
    `${report.dry_run ? 'DRY RUN: ' : ''}${verb} the members of ${report.selections} selection(s) expired at or before ${report.expired_before}: ${rows(report.members, report.excluded)}${report.dry_run ? '; nothing was changed' : ''}`,
    ...report.pruned.map(listed),
    ...(report.listed_complete ? [] : [`  (${report.selections - report.pruned.length} more not listed; --json has the totals)`]),
    ...(report.finished.length === 0 ? [] : [`finished the members of ${report.finished.length} selection(s) an interrupted sweep had begun: ${rows(finished.members, finished.excluded)}`, ...report.finished.map(listed)]),
    `kept: ${report.kept_evidence} expired selection(s) a plan stands on (evidence of a review, never pruned); selections expired after ${report.expired_before} (less than ${age} ago) wait until they are older`,
    ...(report.stopped ? ['stopped before everything prunable was pruned: the next sweep finishes it'] : []),
  ]
  const total = report.selections + report.finished.length
  const deleted = rows(report.members + finished.members, report.excluded + finished.excluded)
  lines.push(
    report.dry_run
      ? `done (dry run): ${report.selections} selection(s) would be pruned, ${rows(report.members, report.excluded)}; ${report.kept_evidence} kept as evidence; nothing was changed`
      : `done: ${total} selection(s) pruned (${report.selections} new, ${report.finished.length} finished), ${deleted} deleted; ${report.kept_evidence} kept as evidence`,
  )
  return `${lines.join('\n')}\n`
}

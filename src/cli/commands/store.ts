import type { Command } from 'commander'
import { sweepRetention } from '../../gateway/index.js'
import type { PruneReport } from '../../selections/index.js'
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
        process.stdout.write(flags.json ? `${JSON.stringify(report, null, 2)}\n` : said(report))
      } finally {
        await gateway.close()
      }
    })
}

function said(report: PruneReport): string {
  const verb = report.dry_run ? 'would prune' : 'pruned'
  const lines = [
    `${report.dry_run ? 'DRY RUN: ' : ''}${verb} the members of ${report.selections} selection(s) expired at or before ${report.expired_before}: ${report.members} member row(s), ${report.excluded} excluded-record row(s)${report.dry_run ? '; nothing was changed' : ''}`,
    ...report.pruned.map((p) => `  ${p.selection_id}  expired ${p.expires_at}  ${p.members} member(s)  ${p.excluded} excluded`),
    ...(report.listed_complete ? [] : [`  (${report.selections - report.pruned.length} more not listed; --json has the totals)`]),
  ]
  return `${lines.join('\n')}\n`
}

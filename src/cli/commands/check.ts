import { Option, type Command } from 'commander'
import type { UpstreamCall } from '../../connectors/index.js'
import { WarrantError } from '../../contract/index.js'
import { CHECK_EXIT_CODES, checkResource, renderCheckReport, writeProbeName, writeProbeTargets } from '../../checks/index.js'
import { recordVersionProof, versionProofDigest } from '../../operations/index.js'
import type { Resource } from '../../resources/index.js'
import type { Store } from '../../store/index.js'
import type { Guarantee } from '../../checks/index.js'
import { withCliGateway } from '../open-cli-gateway.js'
import { collect, positiveInteger } from '../option-values.js'

export function registerCheck(program: Command): void {
  program
    .command('check <resource>')
    .description('probe a resource read-only and print which guarantees hold; exit 0 all hold, 4 could not tell, 5 broken but failing closed, 6 unsafe')
    .option('-c, --config <file>', 'config file')
    .option('--pages <n>', 'pages read from the start of each source (default 3)', positiveInteger('--pages'))
    .option('--page-size <n>', 'records per page (default 50)', positiveInteger('--page-size'))
    .addOption(
      new Option(
        '--write-probe [id]',
        'also send, per action and source, a write with a stale version that must be refused (it sets the values the record already has) to: SOURCE=ID, that record of that source (repeatable); ID, that record (one source, or with --source; on several, on each source not named); none, the first record each source\'s own first page lists. The result is kept, and one that held lets operations of that action skip the second read of each target of that source',
      )
        .argParser(collect)
        .preset('')
        .default([]),
    )
    .option('--source <name>', 'with --write-probe: probe this one source of the resource (default: each source); a probe vouches only for the source it wrote to')
    .option('--json', 'print the report as JSON')
    .action(async (name: string, flags: { config?: string; pages?: number; pageSize?: number; writeProbe: string[]; source?: string; json?: boolean }) => {
      const probing = flags.writeProbe.length > 0
      if (flags.source !== undefined && !probing) throw new WarrantError('invalid_request', '--source names the source a write probe is sent to: give it with --write-probe')
      // the connector's calls, as the probes make them: what a batch read by ids answered is only in them
      const calls: UpstreamCall[] = []
      const report = await withCliGateway({ ...flags, readOnly: !probing, recordConfigMoves: false, onCall: (call) => calls.push(call) }, async (gateway) => {
        // The operator holds the config: naming its resources here reveals nothing (the API's not_found does not)
        if (!gateway.catalogue.names.includes(name))
          throw new WarrantError('not_found', `unknown resource "${name}"; known resources: ${gateway.catalogue.names.join(', ') || '(none)'}`, { resource: name })
        const resource = gateway.catalogue.get(name)
        // before any read or write: a source the config does not declare is refused, nothing sent or kept
        if (flags.source !== undefined && !resource.connector.sources.includes(flags.source))
          throw new WarrantError('invalid_request', `resource "${name}" declares no source "${flags.source}"; its sources: ${resource.connector.sources.join(', ')}`, { resource: name, source: flags.source })
        const targets = probing ? writeProbeTargets(flags.writeProbe, resource.connector.sources, flags.source) : null
        const report = await checkResource({
          name,
          config: resource.config,
          connector: resource.connector,
          stranger: resource.stranger?.() ?? null,
          calls,
          ...(flags.pages ? { pages: flags.pages } : {}),
          ...(flags.pageSize ? { pageSize: flags.pageSize } : {}),
          ...(targets === null ? {} : { writeProbeIds: targets.ids }),
          ...(flags.source === undefined ? {} : { writeProbeSource: flags.source }),
        })
        if (targets !== null) await keepWriteProbes(gateway.store, resource, report.guarantees)
        return report
      })
      process.stdout.write(flags.json ? `${JSON.stringify(report, null, 2)}\n` : `${renderCheckReport(report)}\n`)
      process.exitCode = CHECK_EXIT_CODES[report.verdict]
    })
}

/**
 * Each action's probe result on each source probed goes into the store, naming the source: one that held lets the
 * executor rely on that source's upstream refusing a stale version for that action (one read per batch instead of
 * one more per target, for the targets of that source alone); any other replaces it. A source not probed (another
 * than `--source`, or one where no record was found to write to) keeps what it had.
 */
async function keepWriteProbes(store: Store, resource: Resource, guarantees: readonly Guarantee[]): Promise<void> {
  // the gateway's clock, which the executor holds the proof's age against
  const probedAt = store.now()
  for (const [action, config] of Object.entries(resource.config.actions))
    for (const source of resource.connector.sources) {
      const probe = guarantees.find((g) => g.name === writeProbeName(resource.connector, action, source) && g.source === source)
      if (!probe?.record_id) continue
      const status = probe.status === 'holds' || probe.status === 'unsafe' ? probe.status : 'unknown'
      await recordVersionProof(store.db, {
        resource: resource.name,
        action,
        digest: versionProofDigest(resource.config.connector, config),
        source,
        status,
        record_id: probe.record_id,
        probed_at: probedAt,
        detail: probe.detail,
      })
    }
}

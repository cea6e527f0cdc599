import { once } from 'node:events'
import { accessSync, constants, createWriteStream, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { Command } from 'commander'
import { UNVERIFIED_LISTING, parseCheckpoint, type AuditLog, type AuditQuery, type ListedAuditEntry } from '../../audit/index.js'
import { cliActor } from '../cli-actor.js'
import { WarrantError, isWarrantError } from '../../contract/index.js'
import { openCliGateway } from '../open-cli-gateway.js'
import { reportVerifyResult, verifyExportFile } from './audit-verify-output.js'
import { createProgress, duration, thousands } from '../progress.js'
import { cellText as cell } from '../table-cell.js'

const PAGE = 500

/**
 * `warrant audit verify | acknowledge | checkpoint | export | query`. A broken chain is a refusal (exit 3) whose
 * message names the first bad row; the row itself is printed first. One whose breaks are all acknowledged exits 6.
 */
export function registerAudit(program: Command): void {
  const audit = program.command('audit').description('the audit log: verify its hash chain, export it, answer incident questions')

  audit
    .command('verify')
    .description('recompute the hash chain; exits 0 when intact, 6 when intact but for acknowledged breaks (listed), 3 naming the first bad row when not')
    .option('-c, --config <file>', 'config file')
    .option('--checkpoint <file>', 'a checkpoint exported by `warrant audit checkpoint`: the chain must still hold it')
    .option('--file <export>', 'verify a file written by `warrant audit export` instead of the store (the key: --config\'s audit.key, else WARRANT_AUDIT_KEY)')
    .option('--json', 'print the result as JSON')
    .option('-q, --quiet', 'no progress line on stderr')
    .action(async (flags: { config?: string; checkpoint?: string; file?: string; json?: boolean; quiet?: boolean }) => {
      const checkpoint = flags.checkpoint === undefined ? undefined : parseCheckpoint(readCheckpointFile(flags.checkpoint), flags.checkpoint)
      if (flags.file !== undefined) return verifyExportFile(flags.file, flags, checkpoint)
      const { gateway } = await openCliGateway({ config: flags.config, readOnly: true })
      try {
        const log = gateway.audit
        const progress = createProgress({ quiet: flags.quiet })
        const started = Date.now()
        progress.update('verifying the audit chain…')
        const result = await log
          .verify({ ...(checkpoint ? { checkpoint } : {}), onProgress: (p) => progress.update(`verifying the audit chain: ${thousands(p.rows)}${p.head_seq === null ? '' : ` of ~${thousands(p.head_seq)}`} rows · ${duration(Date.now() - started)}`) })
          .finally(() => progress.done())
        const badSeq = result.status === 'broken' ? result.first_bad_seq : null
        const row = badSeq === null ? undefined : await gateway.store.db.selectFrom('audit_events').selectAll().where('seq', '=', badSeq).executeTakeFirst()
        reportVerifyResult(result, flags, () => (row ? `row ${row.seq} as stored: ${JSON.stringify(row)}` : `no row is stored at seq ${badSeq}`))
      } finally {
        await gateway.close()
      }
    })

  audit
    .command('acknowledge')
    .description('record the first break `audit verify` reports in a signed row, so serve and writing commands start again; verify keeps reporting it (exit 6)')
    .requiredOption('--at <seq>', 'the first bad seq, exactly as `warrant audit verify` reports it')
    .requiredOption('--reason <text>', 'what happened and why the gateway may serve again (kept in the signed row)')
    .option('-c, --config <file>', 'config file')
    .option('--json', 'print the acknowledgement as JSON')
    .action(async (flags: { config?: string; at: string; reason: string; json?: boolean }) => {
      const at = /^\d+$/.test(flags.at) ? Number(flags.at) : NaN
      if (!Number.isSafeInteger(at) || at < 1) throw new WarrantError('invalid_request', `--at must be a row's seq (a whole number from 1), got "${flags.at}"`, { at: flags.at })
      // read-only: the start refusals (a cut end, an altered last row) are what this command answers; it checks the
      // key and the break itself before it appends
      const { gateway } = await openCliGateway({ config: flags.config, readOnly: true })
      try {
        const acknowledged = await gateway.audit.acknowledge({ at, reason: flags.reason, actor: await cliActor(gateway, undefined) })
        if (flags.json) process.stdout.write(`${JSON.stringify(acknowledged, null, 2)}\n`)
        else
          process.stdout.write(
            `break at seq ${acknowledged.seq} (${acknowledged.problem}) acknowledged at seq ${acknowledged.acknowledged_at_seq}: the chain continues from there. \`warrant audit verify\` reports it from now on (exit 6) and still names any later break\n`,
          )
      } finally {
        await gateway.close()
      }
    })

  audit
    .command('checkpoint')
    .description('sign the chain head with the audit key and write it as a checkpoint to keep outside the store')
    .option('-c, --config <file>', 'config file')
    .option('-o, --output <file>', 'write to a file instead of stdout')
    .action(async (flags: { config?: string; output?: string }) => {
      // before the checkpoint row is appended: a checkpoint signed and then lost is one nobody can verify against
      if (flags.output) assertWritable(flags.output, 'checkpoint')
      const { gateway } = await openCliGateway({ config: flags.config })
      try {
        const checkpoint = await gateway.audit.checkpoint(await cliActor(gateway, undefined))
        const text = `${JSON.stringify(checkpoint, null, 2)}\n`
        if (flags.output) {
          try {
            writeFileSync(flags.output, text, { mode: 0o600 })
          } catch (error) {
            // the row is appended by now: the checkpoint goes to stdout rather than nowhere
            process.stdout.write(text)
            throw new WarrantError('invalid_request', `cannot write the checkpoint to ${flags.output} (${(error as Error).message}); it is printed above`)
          }
          process.stderr.write(`checkpoint of seq ${checkpoint.seq} (key ${checkpoint.key_id}) written to ${flags.output}\n`)
        } else process.stdout.write(text)
      } finally {
        await gateway.close()
      }
    })

  audit
    .command('export')
    .description('write every row as stored, one JSON line each, in seq order (re-verifiable without the database)')
    .option('-c, --config <file>', 'config file')
    .option('-o, --output <file>', 'write to a file instead of stdout')
    .action(async (flags: { config?: string; output?: string }) => {
      if (flags.output) assertWritable(flags.output, 'export')
      const { gateway } = await openCliGateway({ config: flags.config, readOnly: true })
      try {
        const log = gateway.audit
        if (flags.output) {
          const file = flags.output
          let rows = 0
          const lines = async function* () {
            for await (const line of log.exportNdjson()) {
              rows += 1
              yield line
            }
          }
          // pipeline: a write that fails later (a full disk) is this command's refusal, never an unhandled 'error' event
          await pipeline(Readable.from(lines()), createWriteStream(file)).catch((error: unknown) => {
            throw isWarrantError(error) ? error : new WarrantError('invalid_request', `cannot write the export to ${file}: ${(error as Error).message}`)
          })
          process.stderr.write(`exported ${rows} rows to ${file}\n`)
          return
        }
        const out = process.stdout
        for await (const line of log.exportNdjson()) if (!out.write(line)) await once(out, 'drain')
      } finally {
        await gateway.close()
      }
    })

  audit
    .command('query')
    .description('events of one operation, plan or principal; with --operation, also who asked, who approved and which records changed')
    .option('-c, --config <file>', 'config file')
    .option('--operation <id>', 'an operation id')
    .option('--plan <id>', 'a plan id')
    .option('--principal <id>', 'a principal id')
    .option('--without-reads', 'leave out successful reads (GET/HEAD, read-only tools and commands; a refused read is still listed), and say how many')
    .option('--json', 'print as JSON')
    .action(async (flags: { config?: string; operation?: string; plan?: string; principal?: string; withoutReads?: boolean; json?: boolean }) => {
      const given = [flags.operation, flags.plan, flags.principal].filter((v) => v !== undefined)
      if (given.length !== 1) throw new WarrantError('invalid_request', 'give exactly one of --operation, --plan or --principal')
      const { gateway } = await openCliGateway({ config: flags.config, readOnly: true })
      try {
        const log = gateway.audit
        const filter: AuditQuery = flags.operation ? { operation_id: flags.operation } : flags.plan ? { plan_id: flags.plan } : { principal: flags.principal! }
        const events: ListedAuditEntry[] = []
        // each page counts the reads it left out in its own span: together, every read up to the last page's head
        let readsLeftOut = 0
        for (let after: number | null | undefined; after !== null; ) {
          const page = await log.query({ ...filter, limit: PAGE, ...(flags.withoutReads ? { without_reads: true } : {}), ...(after === undefined ? {} : { after_seq: after }) })
          events.push(...page.events)
          readsLeftOut += page.reads_left_out?.count ?? 0
          after = page.next_cursor
        }
        const leftOut = flags.withoutReads ? { reads_left_out: { count: readsLeftOut } } : {}
        const whoAsked = flags.operation ? await log.whoAsked(flags.operation) : null
        // an operation has a plan (its row's or its accepted events'), or at least one event not refused: with neither,
        // "records changed (0)" would answer for an operation this store never had (a mistyped id, another config's store).
        // Refused as the listing marks it and who-asked judges it (a 4xx or an error code without an outcome, as earlier
        // releases wrote refusals, too), so a row who-asked leaves out cannot make the operation known here
        if (whoAsked && whoAsked.plan_ids.length === 0 && events.every((e) => e.refused_claim))
          throw new WarrantError('not_found', `operation ${flags.operation} is not in this store's log: no operation row and no accepted event names it (check the id, and that --config names the store it ran on)`, {
            operation_id: flags.operation,
          })
        // A write without an answer (202 Accepted, a lost connection) may have changed its record: listed beside the
        // written ones, never left out of the answer to "which records changed?"
        const writes = flags.operation ? await allChanged(log, flags.operation) : null
        const changed = writes?.filter((r) => r.outcome !== 'unknown') ?? null
        const unanswered = writes?.filter((r) => r.outcome === 'unknown') ?? null

        if (flags.json) {
          // `events` is every page read above; the who-asked copy (capped, with its `truncated`) would only repeat it
          const listed = { verified: false, verification: UNVERIFIED_LISTING, ...leftOut }
          const answer = whoAsked
            ? { ...listed, events, who_asked: { ...whoAsked, events: undefined, truncated: undefined }, records_changed: changed, writes_without_answer: unanswered }
            : { ...listed, events }
          process.stdout.write(`${JSON.stringify(answer, null, 2)}\n`)
          return
        }
        // Ids, names and endpoints are text from upstreams and callers: escaped as table cells are, so a line break in
        // a record id cannot draw a line no event has, nor an escape sequence reach the terminal.
        // first, so a reader who stops at the rows has read it
        process.stdout.write(`not verified: ${UNVERIFIED_LISTING}\n`)
        if (flags.withoutReads) process.stdout.write(`${readsLeftOut} successful reads left out (--without-reads)\n`)
        if (events.length === 0) process.stdout.write(flags.withoutReads ? 'no audit events match but those reads\n' : 'no audit events match\n')
        for (const e of events)
          process.stdout.write(
            `${String(e.seq).padStart(7)}  ${e.at}  ${e.level.padEnd(4)}  ${cell(e.principal ?? '-').padEnd(12)}  ${e.surface.padEnd(8)}  ${cell(e.action)}${e.refused_claim ? '  [refused claim: its ids are what the request named]' : ''}${e.target_id ? `  target=${cell(e.target_id)}` : ''}  ${cell(JSON.stringify(e.summary))}\n`,
          )
        if (whoAsked) {
          process.stdout.write(`\nwho asked (operation ${whoAsked.operation_id}, plans ${whoAsked.plan_ids.join(', ') || '-'}, selections ${whoAsked.selection_ids.join(', ') || '-'}):\n`)
          for (const r of whoAsked.requesters) process.stdout.write(`  ${cell(r.principal ?? '(gateway)')} ${r.name ? `"${cell(r.name)}" ` : ''}${r.role ?? ''} via ${r.surfaces.join(', ')}: ${cell(r.actions.join(', '))}\n`)
          process.stdout.write('approvals:\n')
          if (whoAsked.approvals.length === 0) process.stdout.write('  none recorded\n')
          for (const a of whoAsked.approvals) process.stdout.write(`  ${a.at}  ${a.decision} by ${cell(a.principal ?? '-')}${a.name ? ` "${cell(a.name)}"` : ''} (${a.role ?? '?'}) via ${a.surface}, plan ${a.plan_id ?? '-'}\n`)
        }
        if (changed) {
          process.stdout.write(`records changed (${changed.length}):\n`)
          for (const r of changed) process.stdout.write(writeLine(r))
          if (unanswered && unanswered.length > 0) {
            process.stdout.write(`writes without an answer, which may have changed their record (${unanswered.length}):\n`)
            for (const r of unanswered) process.stdout.write(writeLine(r))
          }
        }
      } finally {
        await gateway.close()
      }
    })
}

/** One upstream write of an operation: the record, the call, its outcome. */
function writeLine(r: Awaited<ReturnType<typeof allChanged>>[number]): string {
  return `  ${cell(r.target_id ?? '-')}  ${cell(r.method)} ${cell(r.endpoint)}  ${r.outcome}${r.status === null ? '' : ` ${r.status}`}  ${r.at}\n`
}

async function allChanged(log: AuditLog, operationId: string) {
  const records = []
  for (let after: number | null | undefined; after !== null; ) {
    const page = await log.recordsChanged(operationId, { limit: 5000, include_unknown: true, ...(after === undefined ? {} : { after_seq: after }) })
    records.push(...page.records)
    after = page.next_cursor
  }
  return records
}

/**
 * Refuses an output file that cannot be written (its folder missing or read-only, a directory), naming it, before
 * anything is read or appended. An existing file is not truncated here: a refusal later must not empty it.
 */
function assertWritable(file: string, what: 'export' | 'checkpoint'): void {
  try {
    if (!existsSync(file)) accessSync(dirname(resolve(file)), constants.W_OK)
    else if (statSync(file).isDirectory()) throw new Error('it is a directory')
    else accessSync(file, constants.W_OK)
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'its folder does not exist' : (error as Error).message
    throw new WarrantError('invalid_request', `cannot write the ${what} to ${file}: ${reason}`, { output: file })
  }
}

function readCheckpointFile(path: string): string {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    throw new WarrantError('invalid_request', `cannot read checkpoint file ${path}`)
  }
}

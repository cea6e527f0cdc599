import { createReadStream, openSync, statSync } from 'node:fs'
import { createInterface } from 'node:readline'
import { loadAuditKeyring, verifyAuditExport, type AuditCheckpoint, type AuditKeyring, type VerifyResult } from '../../audit/index.js'
import { loadConfigFile } from '../../config/index.js'
import { WarrantError } from '../../contract/index.js'
import { resolveConfigPath } from '../config-path.js'
import { EXIT } from '../exit-status.js'
import { cellText as cell } from '../table-cell.js'

/**
 * Prints a verification's result (the store's or an export's) and refuses a broken chain: exit 3, naming the
 * first bad row, the row itself printed first (`badRow`: the line saying it, as stored or as the file holds it).
 * A chain that verifies only with acknowledged breaks exits 6, each break listed: never 0 again for that store.
 */
export function reportVerifyResult(result: VerifyResult, flags: { readonly json?: boolean }, badRow: () => string, hint = ''): void {
  if (flags.json) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`)
  if (result.status !== 'broken') {
    if (!flags.json) {
      const intact = result.status === 'ok' ? 'audit log intact' : `audit log verifies only with ${result.acknowledged_breaks.length} acknowledged break${result.acknowledged_breaks.length === 1 ? '' : 's'}`
      process.stdout.write(`${intact}: ${result.rows} rows${result.last_seq === null ? '' : `, last seq ${result.last_seq} (${result.last_hash})`}\n`)
      for (const line of acknowledgedLines(result)) process.stdout.write(`${line}\n`)
      process.stdout.write(`guarantee: ${result.guarantee}${result.key_ids.length > 0 ? ` (key ${result.key_ids.join(', ')})` : ''}${result.checkpoint ? `; checkpoint at seq ${result.checkpoint.seq} holds` : ''}\n${result.statement}\n`)
    }
    if (result.status === 'ok_with_acknowledged_breaks') process.exitCode = EXIT.acknowledged
    return
  }
  if (!flags.json) {
    process.stdout.write(`audit log BROKEN at seq ${result.first_bad_seq} (${result.problem}): ${result.message}\n`)
    if (result.problem === 'unverifiable' && hint) process.stdout.write(`${hint}\n`)
    process.stdout.write(`${badRow()}\n`)
    process.stdout.write(`${result.rows_checked} rows before it verified\n`)
    for (const line of acknowledgedLines(result)) process.stdout.write(`${line}\n`)
  }
  throw new WarrantError('conflict', `audit chain broken at seq ${result.first_bad_seq}: ${result.problem}`, result)
}

/** One line per acknowledged break: where, what, when acknowledged, by whom and why (text from people: escaped). */
function acknowledgedLines(result: VerifyResult): string[] {
  return result.acknowledged_breaks.map(
    (b) =>
      `acknowledged break at seq ${b.seq} (${b.problem}): ${cell(b.message)}; acknowledged at seq ${b.acknowledged_at_seq} on ${b.at} by ${cell(b.by ?? b.principal ?? '-')}: "${cell(b.reason)}"`,
  )
}

/**
 * `warrant audit verify --file EXPORT`: verifies an export without opening the store. The key comes from the
 * config's `audit.key` with `--config`, else `WARRANT_AUDIT_KEY`; without one, a signed export is unverifiable.
 */
export async function verifyExportFile(file: string, flags: { readonly config?: string; readonly json?: boolean }, checkpoint: AuditCheckpoint | undefined): Promise<void> {
  const keyring = exportKeyring(flags.config)
  const { result, bad_line } = await verifyAuditExport(readLines(file), file, { keyring, ...(checkpoint ? { checkpoint } : {}) })
  reportVerifyResult(result, flags, () => (bad_line === null ? `no line of ${file} holds the row` : `the line of ${file}: ${bad_line}`), 'give the key: --config CONFIG (its audit.key) or WARRANT_AUDIT_KEY')
}

function exportKeyring(config: string | undefined): AuditKeyring | null {
  if (config === undefined) return loadAuditKeyring(undefined)
  const source = loadConfigFile(resolveConfigPath(config).path).audit?.key
  // verifying never writes a key file: a key created now could not have signed anything
  return loadAuditKeyring(source && 'file' in source ? { file: source.file } : source)
}

/** The file's lines, streamed; a file that cannot be opened is refused here, naming it and why. */
function readLines(file: string): AsyncIterable<string> {
  let fd: number
  try {
    if (statSync(file).isDirectory()) throw new Error('it is a directory')
    fd = openSync(file, 'r')
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message
    throw new WarrantError('invalid_request', `cannot read the export ${file}: ${reason}`, { file })
  }
  return streamLines(fd)
}

// The reader starts only when the first line is asked for: readline drops lines read before its iterator exists
// (the scratch store is opened in between), and then waits for ever, the process ending with exit 0 and no answer.
async function* streamLines(fd: number): AsyncIterable<string> {
  const input = createReadStream('', { fd })
  try {
    yield* createInterface({ input, crlfDelay: Infinity })
  } finally {
    input.destroy() // a verdict before the end stops reading, and closes the file
  }
}

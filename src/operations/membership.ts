import { type FieldTypeNames, matchesFilter } from '../contract/index.js'
import type { Connector, SourceRecord } from '../connectors/index.js'
import type { OperationTargetRow } from '../store/index.js'
import { sameVersion, versionText } from './effect.js'
import { rateLimitedWriteSent } from './ledger.js'
import { asksToWait } from './reread.js'
import { sourcesOf } from './target-source.js'
import type { OperationExecution, StopRuleName } from './types.js'

/** What re-reading a batch before writing it found. */
export type MembershipCheck =
  /** `records`: the batch as just read (absent for a compensation, whose batch is not read) */
  | { readonly kind: 'unchanged'; readonly records?: ReadonlyMap<string, SourceRecord> }
  | { readonly kind: 'changed'; readonly rule: StopRuleName; readonly target: OperationTargetRow; readonly message: string }
  /** a 429, or a 503 with Retry-After; `retryAfterSeconds`: the upstream's Retry-After, where the connector passed it on */
  | { readonly kind: 'rate_limited'; readonly message: string; readonly retryAfterSeconds?: number }

/**
 * Where the selection was read without a consistent snapshot, each bounded batch is re-read right before its
 * first write (the article: "refaites immédiatement la prévisualisation avant chaque lot limité et
 * arrêtez-vous dès que l'appartenance diffère"). Any member that is gone, has another version, no longer
 * matches the selection's filter, or now matches one of its exclusion rules means the set the reviewer
 * approved is not the set the upstream holds: the operation halts before writing any of the batch.
 * A member that cannot be re-read cannot be proven, and halts too.
 */
export async function checkBatchMembership(connector: Connector, execution: OperationExecution, batch: readonly OperationTargetRow[], types: FieldTypeNames): Promise<MembershipCheck> {
  if (batch.length === 0) return { kind: 'unchanged' }
  // A compensation's members are the ids the operation wrote, from its ledger: no filter can stop matching.
  // A member that changed since is the case the compensation expects, and its own target is skipped
  // ("no longer holds what the operation wrote"); halting there would leave every later target pending.
  if (execution.plan.compensates) return { kind: 'unchanged' }
  let read: Awaited<ReturnType<Connector['readByIds']>>
  try {
    read = await connector.readByIds(batch.map((t) => t.record_id), undefined, sourcesOf(batch))
  } catch (error) {
    return { kind: 'changed', rule: 'membership_unverifiable', target: batch[0]!, message: `re-reading the batch failed: ${error instanceof Error ? error.message : String(error)}` }
  }
  const failures = new Map(read.failed.map((f) => [f.id, f]))
  const missing = new Set(read.missing)
  const { filter, exclude } = execution.selection.selector
  for (const target of batch) {
    const id = target.record_id
    const failure = failures.get(id)
    if (failure && asksToWait(failure)) return { kind: 'rate_limited', message: failure.message, ...(failure.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: failure.retryAfterSeconds }) }
    if (failure) return { kind: 'changed', rule: 'membership_unverifiable', target, message: `member "${id}" could not be re-read before its batch (${failure.message}); membership cannot be proven` }
    const record = read.records.get(id)
    if (!record || missing.has(id)) return { kind: 'changed', rule: 'membership_changed', target, message: `member "${id}" no longer exists upstream` }
    // its own write, answered 429, may have landed all the same (a process resuming the operation reads the batch
    // again): a change is then possibly ours, so its own step judges it (unknown, or skipped), never a halt that
    // leaves it pending as if nothing had been sent
    if (rateLimitedWriteSent(target)) continue
    // frozen with no version: the record read now has one, and whether it changed since cannot be told
    if (target.expected_version === '')
      return {
        kind: 'changed',
        rule: 'membership_unverifiable',
        target,
        message: `member "${id}" was frozen with no version (its list gave none), so whether it changed since the selection cannot be told; make a new selection once the list gives each record's version (version.from etag: an etag member on each item)`,
      }
    if (target.expected_version !== null && !sameVersion(record.version, target.expected_version))
      return { kind: 'changed', rule: 'membership_changed', target, message: `member "${id}" is at ${versionText(record.version)}, not at ${versionText(target.expected_version)} as the selection froze it` }
    if (!matchesFilter(record.fields, filter, types)) return { kind: 'changed', rule: 'membership_changed', target, message: `member "${id}" no longer matches the selection's filter` }
    const rule = exclude.find((r) => matchesFilter(record.fields, r.filter, types))
    if (rule) return { kind: 'changed', rule: 'membership_changed', target, message: `member "${id}" now matches exclusion rule "${rule.rule}"` }
  }
  return { kind: 'unchanged', records: read.records }
}

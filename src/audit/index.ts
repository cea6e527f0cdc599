/**
 * The audit log: two levels (run: who asked and who approved; call: every upstream call), one hash chain,
 * append-only, verifiable and exportable.
 *
 * @example
 * import { createAuditLog } from '../audit/index.js'
 * const audit = createAuditLog({ store, log })
 * await audit.record({ actor, action: 'mcp:commit_change', plan_id, operation_id, summary: { plan_id } })
 * audit.recordCall({ ...call, operation_id, selection_digest })
 * const { ok } = await audit.verify()
 */
export { AUDIT_ADVISORY_LOCK_KEY, type AuditLogLogger } from './append.js'
export { createAuditLog, type AuditLog, type AuditLogOptions } from './audit-log.js'
export { isRefusal, toEntry, type AuditEntry, type ListedAuditEntry } from './entry.js'
export { UPSTREAM_SURFACE, type CallContext, type CallEvent, type RunEvent } from './events.js'
export {
  WHO_ASKED_LIMIT,
  WRITE_SUCCEEDED_OUTCOMES,
  WRITE_UNKNOWN_OUTCOMES,
  type ChangedRecord,
  type RecordedApproval,
  type RecordsChanged,
  type RecordsChangedOptions,
  type Requester,
  type WhoAsked,
} from './incidents.js'
export { UNVERIFIED_LISTING, type AuditPage, type AuditQuery } from './query.js'
export { READ_ACTIONS, type ReadsLeftOut } from './reads.js'
export { AUDIT_FIRST_SEQ, AUDIT_GENESIS_HASH, checkRowHash, hashAuditRow, rowHashMatches, signingKeyId, type UnhashedAuditRow } from './chain.js'
export { CHECKPOINT_FORMAT, checkCheckpoint, parseCheckpoint, signCheckpoint, type AuditCheckpoint } from './checkpoint.js'
export { AUDIT_KEY_ENV, createAuditKeyFile, loadAuditKeyring, parseAuditKeys, type AuditKey, type AuditKeyring, type AuditKeySource } from './keyring.js'
export { assertChainKeyConfigured, assertKeyFileCreatable, auditKeySourceLabel } from './key-check.js'
export { CHAIN_HEAD_KEY, checkHead, readChainHead, type ChainHead } from './head.js'
export { REDACTED, isSecretKey, scrubSecrets } from './redact.js'
export { EXPORT_FORMAT, type ExportEnd } from './export.js'
export { verifyAuditExport, type ExportVerifyResult } from './verify-export.js'
export { CHAIN_PROBLEMS, VERIFY_PAGE_SIZE, verifyAuditChain, type ChainGuarantee, type ChainProblem, type IntactChain, type VerifyOptions, type VerifyResult } from './verify.js'
export { ACKNOWLEDGE_ACTION, type AcknowledgedBreak } from './acknowledged-breaks.js'
export { type AcknowledgeRequest } from './acknowledge.js'
export { markRequestAudited, withRequestAudit } from './request-scope.js'
export { boundedSummary } from './summary.js'
export { answerSummary, type AnswerSummary, type StreamEnd } from './answer-summary.js'

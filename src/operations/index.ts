export { createOperationService, type OperationServiceOptions } from './operation-service.js'
export { bulkActionBodySchema, canonicalAction } from './commit.js'
export { fixStopRules, StopRuleTracker, DEFAULT_MAX_RATE_LIMIT_RETRIES, DEFAULT_MAX_RETRY_AFTER_SECONDS, type ObservedOutcome } from './stop-rules.js'
export { checkStatus, checkRecordFields, checkUntouched, type EffectCheck, type UntouchedCheck } from './effect.js'
export { startRunner, type ExecutorDeps, type ExecutorLog, type OperationRunner, type RunRecorder } from './executor.js'
export { claimOperations, otherLeaseHolders, renewLease, releaseLease } from './lease.js'
export { proofsBySource, recordVersionProof, readVersionProof, versionProofDigest, vouches, VERSION_PROOF_MAX_AGE_MS, type VersionProof, type VersionProofs } from './version-proof.js'
export { sweepVersionProofs } from './version-proof-sweep.js'
export { INTERRUPTED_REASON, countTargets } from './ledger.js'
export { askedAgainText, beforeLabel } from './target-reasons.js'
export { waitWords, type RateLimitKind, type WaitWords } from './wait-words.js'
export {
  operationViewSchema,
  commitReceiptSchema,
  resultsPageSchema,
  reconcileReportSchema,
  haltReasonSchema,
  stopRulesSchema,
} from './schemas.js'
export {
  FINISHED_STATES,
  OPERATION_STATES,
  TARGET_STATES,
  STOP_RULE_NAMES,
  type OperationService,
  type OperationView,
  type OperationExecution,
  type OperationState,
  type TargetState,
  type TargetCounts,
  type TargetResult,
  type ResultsPage,
  type ResultsQuery,
  type ReconcileReport,
  type CommitReceipt,
  type CommitRoute,
  type BulkActionRequest,
  type StopRules,
  type StopRuleName,
  type HaltReason,
  type OperationPause,
} from './types.js'

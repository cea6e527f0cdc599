export { createSelectionService, storedFieldsOf, SELECTION_DEFAULT_BUDGET, RECOVERY_MAX_IDS, UNREACHED, type SelectionServiceOptions } from './create-selection-service.js'
export {
  selectionRequestSchema,
  selectionViewSchema,
  createdSelectionViewSchema,
  selectionMemberSchema,
  exclusionRuleSchema,
  exclusionSummarySchema,
  groupCountSchema,
  selectionOriginSchema,
  selectionBudgetSchema,
  memberPageQuerySchema,
  memberPageSchema,
  excludedPageQuerySchema,
  excludedPageSchema,
  pageCompleteness,
  exportFormatSchema,
  ruleNameSchema,
  type SelectionRequestInput,
  type SelectionView,
  type CreatedSelectionView,
  type MemberPage,
  type ExcludedPage,
  type ExportFormat,
} from './schemas.js'
export type {
  SelectionService,
  FreezeProgress,
  SelectionRecord,
  SelectionMember,
  SelectionRequest,
  SelectionOrigin,
  SelectionCompleteness,
  GroupCount,
  ExclusionRule,
  CompensationTarget,
  RemainderTarget,
} from './selection-service.js'
export { compareIds, MEMBER_ORDERING } from './id-order.js'
export { exportOutcome, manifestFile, manifestHeaders, type ExportEnd, type ExportStop } from './export.js'
export { EXPORT_STARTED_ACTION, exportStartedSummary } from './export-audit.js'
export { csvCell, csvLine } from './csv-cell.js'
export { parseRequest } from './parse-request.js'
export { GROUPS_SHOWN } from './lookalike-groups.js'
export { agentTexts, lookalikeIds, planLookalikesSchema, selectionLookalikesSchema, type LookalikeIds, type SelectionLookalikes } from './lookalike-ids.js'
export { pruneExpiredMembers, PRUNE_LISTED_MAX, type PruneOptions, type PruneReport, type PrunedSelection } from './retention.js'
export { prunedMembers, PRUNED_BY } from './pruned-members.js'

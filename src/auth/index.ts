export { createPrincipalStore, hashToken, LAST_USED_RESOLUTION_MS, scopesSchema, type AddTokenOptions, type PrincipalStore, type IssuedToken, type IssueOptions, type TokenListing } from './principals.js'
export { noEnabledAdminLeft, statusAuditDetails, statusReason, type PrincipalListing, type PrincipalStatusChange } from './principal-status.js'
export { principalListSchema, principalStatusAnswerSchema, principalStatusRequestSchema } from './principal-schemas.js'
export { authorityRecheck, RECHECK_EVERY_MS, type AuthorityRecheckOptions } from './authority-recheck.js'

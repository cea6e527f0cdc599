export { createPrincipalStore, hashToken, LAST_USED_RESOLUTION_MS, scopesSchema, type AddTokenOptions, type PrincipalStore, type IssuedToken, type IssueOptions, type TokenListing } from './principals.js'
export type { PrincipalListing, PrincipalStatusChange } from './principal-status.js'

export { createPrincipalStore, hashToken, scopesSchema, type AddTokenOptions, type PrincipalStore, type IssuedToken, type IssueOptions, type TokenListing } from './principals.js'

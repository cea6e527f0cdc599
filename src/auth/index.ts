export { createPrincipalStore, hashToken, scopesSchema, type PrincipalStore, type IssuedToken, type IssueOptions, type TokenListing } from './principals.js'

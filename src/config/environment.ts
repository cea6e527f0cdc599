import type { ResourceConfig } from './schema.js'

/**
 * The environment as one prominent label: name, account and host. Reviewers approve lists in the wrong
 * environment when it reads like a detail, so every surface shows this same string.
 *
 * @example environmentLabel({ name: 'billing-prod', account: '4411' }) // 'billing-prod (acct 4411)'
 */
export function environmentLabel(environment: ResourceConfig['environment']): string {
  const parts = [environment.account ? `acct ${environment.account}` : null, environment.host ? `host ${environment.host}` : null].filter(Boolean)
  return parts.length > 0 ? `${environment.name} (${parts.join(', ')})` : environment.name
}

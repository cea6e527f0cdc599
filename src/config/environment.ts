import type { ResourceConfig } from './schema.js'
import { databaseHostOf } from './unencrypted-database.js'

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

/**
 * Where a resource's connector reaches, as its drivers connect: each http source's host (and port), a database
 * server's host; none for a SQLite file. The environment's `host` is words the operator wrote; this is read from
 * the base_url or database URL that the writes use.
 */
export function connectorHostsOf(connector: ResourceConfig['connector']): string[] {
  if (connector.kind === 'http') return [...new Set(connector.sources.map((s) => new URL(s.base_url).host))]
  const host = databaseHostOf(connector.url)
  return host === undefined ? [] : [host]
}

/**
 * The environment's `host` when it names none of the hosts the connector reaches (null when it names one, says
 * no host, or the connector reaches a local file): a label copied from staging over a base_url pointed elsewhere.
 */
export function mislabelledHostOf(environment: ResourceConfig['environment'], hosts: readonly string[]): string | null {
  const label = environment.host?.toLowerCase()
  if (label === undefined || hosts.length === 0) return null
  const named = hosts.some((h) => namesHost(label, h.toLowerCase().replace(/^\[(.*)\](:\d+)?$/, '$1').replace(/:\d+$/, '')))
  return named ? null : (environment.host ?? null)
}

/** Whether `label` names `hostname` as a whole name: "10.0.0.50" does not name 10.0.0.5, nor "api.example.com.evil" api.example.com. */
function namesHost(label: string, hostname: string): boolean {
  const escaped = hostname.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  return new RegExp(`(?<![a-z0-9.-])${escaped}(?![a-z0-9-]|\\.[a-z0-9])`).test(label)
}

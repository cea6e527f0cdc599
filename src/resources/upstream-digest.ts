import { digestOf } from '../contract/index.js'
import type { ResourceConfig } from '../config/index.js'

/**
 * Where a resource's connector reads and writes: each source's base URL (http), the database and table (sql), without
 * credentials. The environment a reviewer sees is a label the config declares; this is what reads and writes follow,
 * so a selection keeps it at its freeze and a plan at its proposal, and a connector pointed elsewhere since (staging's
 * base_url changed to production's, the label left as it was) is drift, not the place the members were read from.
 * It lives here, below selections and plans, because both judge by it.
 *
 * @example upstreamDigestOf(resource.config) // 'sha256:…', the same while no base_url, url or table changes
 */
export function upstreamDigestOf(config: Pick<ResourceConfig, 'connector'>): string {
  const c = config.connector
  if (c.kind === 'http') return digestOf({ kind: 'http', sources: c.sources.map((s) => ({ name: s.name, base_url: s.base_url })) })
  return digestOf({ kind: 'sql', url: withoutCredentials(c.url), table: c.table })
}

/** A password in a database URL is no part of where it points (and must not be digested where a plan shows it). */
function withoutCredentials(url: string): string {
  if (!URL.canParse(url)) return url
  const parsed = new URL(url)
  parsed.password = ''
  return parsed.toString()
}

import { digestOf } from '../contract/index.js'
import type { ResourceConfig } from '../config/index.js'

/**
 * Where a resource's connector reads and writes, and how it names and versions a record there: each source's base URL
 * and list and get paths (http), the database and table (sql), the credential's reference (never its value), the
 * id and version fields, and where each declared field lives inside an http record (`field_paths`). The
 * environment a reviewer sees is a label the config declares; this is what reads and writes follow, so a selection
 * keeps it at its freeze and a plan at its proposal, and a connector pointed elsewhere since (staging's base_url changed
 * to production's, the label left as it was) is drift, not the place the members were read from. So is a record named
 * by another column since: a member frozen as id "r1" of `id` would be written as the row whose `account_no` is "r1",
 * one nobody reviewed, at a version every fresh row has. It lives here, below selections and plans, because both judge
 * by it.
 *
 * @example upstreamDigestOf(resource.config) // 'upstream/3:sha256:…', the same while none of those changes
 */
export function upstreamDigestOf(config: UpstreamConfig): string {
  return `${FIELD_PATHS}${digestOf({ where: placeOf(config), naming: namingOf(config), paths: fieldPathsOf(config) })}`
}

/**
 * Whether `stored` (an `upstreamDigestOf` kept with a selection or a plan) is where, and how, `config` reads records
 * now. One kept before records' naming was part of it (a bare `sha256:…`) is judged by the place alone, as then.
 *
 * @example if (!sameUpstream(resource.config, selection.upstream_digest)) refuse()
 */
export function sameUpstream(config: UpstreamConfig, stored: string): boolean {
  if (stored.startsWith(FIELD_PATHS)) return stored === upstreamDigestOf(config)
  if (stored.startsWith(NAMING)) return stored === `${NAMING}${digestOf({ where: placeOf(config), naming: namingOf(config) })}`
  return stored === digestOf(legacyPlaceOf(config))
}

/** What a drift message says may have changed, on every surface that refuses for it. */
export const UPSTREAM_PARTS =
  'its base_url, list or get path, database URL or table, or the credential it reads with (the variable or file it comes from) changed, or the id_field or version_field that names and versions its records there, or the field_paths where its fields are read and written inside a record'

type UpstreamConfig = Pick<ResourceConfig, 'connector' | 'id_field' | 'version_field'>

/** The prefix of a digest that covers records' naming too (none before it did); kept digests of it are judged as then. */
const NAMING = 'upstream/2:'
/** The prefix of a digest that also covers where each declared field lives inside an http record. */
const FIELD_PATHS = 'upstream/3:'

/**
 * Where a field is read inside an http record, and where a replacing write puts a set value, when it is not at its
 * own name: the `field_paths` entries naming another path (an entry naming the field's own name changes nothing, nor
 * does a field declared without one). Pointed elsewhere since (`status` read at `note`), a replacing write put the
 * approved "closed" into every record's `note`, and the re-read, reading `status` there too, called it the approved
 * effect. A sql field is its column: nothing to add.
 */
function fieldPathsOf(config: UpstreamConfig): Record<string, string> | null {
  const c = config.connector
  if (c.kind !== 'http') return null
  const moved = Object.keys(c.field_paths).filter((f) => c.field_paths[f] !== f).sort()
  return Object.fromEntries(moved.map((f) => [f, c.field_paths[f]!]))
}

/**
 * Where the connector reads, and as whom: many APIs answer staging and production (test and live mode, one tenant
 * and another) on one host, the credential deciding which. The credential counts by its reference (the variable or
 * file it is read from, and the header it goes in), never its value: a key rotated in the same variable is no move.
 */
function placeOf(config: UpstreamConfig) {
  const c = config.connector
  if (c.kind === 'http')
    return {
      kind: 'http',
      sources: c.sources.map((s) => ({ name: s.name, base_url: s.base_url })),
      list: c.list.path,
      get: c.get.path,
      credential: c.credential === undefined ? null : { header: c.credential.header, scheme: c.credential.scheme ?? null, secret: c.credential.secret },
    }
  return { ...legacyPlaceOf(config), password: c.password ?? null }
}

/** How a record is named and versioned: the id (and, over http, where in a record it is) and the version. */
function namingOf(config: UpstreamConfig) {
  const c = config.connector
  if (c.kind === 'http') return { id_field: config.id_field, id_path: c.field_paths[config.id_field] ?? null, version: c.version }
  return { id_field: config.id_field, version_field: config.version_field ?? null }
}

/** The place as digests kept before naming was part of them hashed it. */
function legacyPlaceOf(config: UpstreamConfig) {
  const c = config.connector
  if (c.kind === 'http') return { kind: 'http', sources: c.sources.map((s) => ({ name: s.name, base_url: s.base_url })) }
  return { kind: 'sql', url: withoutCredentials(c.url), table: c.table }
}

/** A password in a database URL is no part of where it points (and must not be digested where a plan shows it). */
function withoutCredentials(url: string): string {
  if (!URL.canParse(url)) return url
  const parsed = new URL(url)
  parsed.password = ''
  return parsed.toString()
}

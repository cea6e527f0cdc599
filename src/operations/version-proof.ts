import type { Kysely } from 'kysely'
import { digestOf } from '../contract/index.js'
import type { Connector } from '../connectors/index.js'
import type { Database } from '../store/index.js'
import type { OperationExecution } from './types.js'

/**
 * What `warrant check RESOURCE --write-probe ID` saw when it sent one action's write with a stale version:
 * `holds` (the upstream refused it), `unsafe` (it accepted it) or `unknown` (the probe could not tell). Kept in
 * the store, so an executor can rely on the upstream enforcing the version, but only after a probe that held,
 * for the action and connector exactly as they were probed.
 */
export interface VersionProof {
  readonly resource: string
  readonly action: string
  /** `versionProofDigest` of the connector and action config that were probed. */
  readonly digest: string
  readonly status: 'holds' | 'unsafe' | 'unknown'
  readonly record_id: string
  readonly probed_at: string
  readonly detail: string
}

/**
 * How long a probe vouches for an upstream: a deployment can stop enforcing versions without any change on
 * Warrant's side, so an old proof is no proof (the executor then re-reads every target before its write).
 */
export const VERSION_PROOF_MAX_AGE_MS = 30 * 24 * 3600 * 1000

const keyOf = (resource: string, action: string) => `version_proof:${resource}:${action}`

/** What a proof is bound to: the resource's connector (where writes go) and the action (what they send). */
export function versionProofDigest(connector: unknown, action: unknown): string {
  return digestOf({ connector, action })
}

/** Keeps the latest probe of one action, replacing any earlier one: a probe that did not hold revokes one that did. */
export async function recordVersionProof(db: Kysely<Database>, proof: VersionProof): Promise<void> {
  const key = keyOf(proof.resource, proof.action)
  const value = JSON.stringify(proof)
  await db
    .insertInto('kv')
    .values({ key, value })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
    .execute()
}

/** The latest probe of one action, if any. */
export async function readVersionProof(db: Kysely<Database>, resource: string, action: string): Promise<VersionProof | null> {
  const row = await db.selectFrom('kv').select('value').where('key', '=', keyOf(resource, action)).executeTakeFirst()
  return row ? (JSON.parse(row.value) as VersionProof) : null
}

/**
 * Whether `proof` vouches that the upstream refuses a stale version for this action now: it held, it was made
 * on the same connector and action config (`digest`), and it is younger than VERSION_PROOF_MAX_AGE_MS.
 *
 * @example vouches(await readVersionProof(db, 'users', 'set_role'), versionProofDigest(connector, action), Date.now())
 */
export function vouches(proof: VersionProof | null, digest: string, now: number): proof is VersionProof {
  if (!proof || proof.status !== 'holds' || proof.digest !== digest) return false
  const at = Date.parse(proof.probed_at)
  return Number.isFinite(at) && at <= now && now - at < VERSION_PROOF_MAX_AGE_MS
}

/**
 * The write probe that lets an operation skip re-reading each target: none where the connector's own write
 * enforces the version (it needs none) or where nothing can read one; a probe that cannot be read is reported
 * to `onError` and counts as none, so every target is re-read before its write.
 */
export async function provenBy(
  connector: Pick<Connector, 'writeEnforcesVersion'>,
  read: ((execution: OperationExecution) => Promise<VersionProof | null>) | undefined,
  execution: OperationExecution,
  onError: (error: unknown) => void,
): Promise<VersionProof | null> {
  if (connector.writeEnforcesVersion || !read) return null
  return read(execution).catch((error: unknown) => {
    onError(error)
    return null
  })
}

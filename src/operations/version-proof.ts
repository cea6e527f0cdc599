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
  /**
   * The source the probe wrote to: it vouches for that source alone, since another source's upstream may accept a
   * stale write. Absent: a proof kept before probes named their source (see `proofsBySource`).
   */
  readonly source?: string
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

/** A proof stored before probes named their source: one per action. */
const legacyKeyOf = (resource: string, action: string) => `version_proof:${resource}:${action}`
// source names are unbounded config strings: JSON keeps (resource, action, source) apart whatever they hold
const keyOf = (resource: string, action: string, source: string | undefined) =>
  source === undefined ? legacyKeyOf(resource, action) : `version_proof:${JSON.stringify([resource, action, source])}`

/** What a proof is bound to: the resource's connector (where writes go) and the action (what they send). */
export function versionProofDigest(connector: unknown, action: unknown): string {
  return digestOf({ connector, action })
}

/**
 * Keeps the latest probe of one action on one source, replacing any earlier one there: a probe that did not hold
 * revokes one that did. A proof naming its source also drops the action's proof kept before probes named one.
 */
export async function recordVersionProof(db: Kysely<Database>, proof: VersionProof): Promise<void> {
  const key = keyOf(proof.resource, proof.action, proof.source)
  const value = JSON.stringify(proof)
  await db.transaction().execute(async (tx) => {
    await tx
      .insertInto('kv')
      .values({ key, value })
      .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
      .execute()
    if (proof.source !== undefined) await tx.deleteFrom('kv').where('key', '=', legacyKeyOf(proof.resource, proof.action)).execute()
  })
}

/** The latest probe of one action on `source` (absent: the proof kept before probes named their source), if any. */
export async function readVersionProof(db: Kysely<Database>, resource: string, action: string, source?: string): Promise<VersionProof | null> {
  const row = await db.selectFrom('kv').select('value').where('key', '=', keyOf(resource, action, source)).executeTakeFirst()
  return row ? (JSON.parse(row.value) as VersionProof) : null
}

/**
 * The latest probe of one action on each of `sources` (the resource's, as configured now). A proof kept before
 * probes named their source counts only where the resource has one source: its digest binds the connector config,
 * sources included, so a digest that still matches means the probe read and wrote that one source (there was no
 * other); on a resource of several it was sent to one of them, which it does not say, so it vouches for none.
 */
export async function proofsBySource(db: Kysely<Database>, resource: string, action: string, sources: readonly string[]): Promise<Map<string, VersionProof>> {
  const out = new Map<string, VersionProof>()
  for (const source of sources) {
    const proof = await readVersionProof(db, resource, action, source)
    if (proof) out.set(source, proof)
  }
  if (sources.length === 1 && out.size === 0) {
    const legacy = await readVersionProof(db, resource, action)
    if (legacy) out.set(sources[0]!, legacy)
  }
  return out
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

/** Source → the write probe that vouches the upstream there refuses a stale version for this operation's action. */
export type VersionProofs = ReadonlyMap<string, VersionProof>

const NO_PROOFS: VersionProofs = new Map()

/**
 * The write probes that let an operation skip re-reading each target, by source: none where the connector's own
 * write enforces the version (it needs none) or where nothing can read one; probes that cannot be read are
 * reported to `onError` and count as none, so every target is re-read before its write.
 */
export async function provenBy(
  connector: Pick<Connector, 'writeEnforcesVersion'>,
  read: ((execution: OperationExecution) => Promise<VersionProofs>) | undefined,
  execution: OperationExecution,
  onError: (error: unknown) => void,
): Promise<VersionProofs> {
  if (connector.writeEnforcesVersion || !read) return NO_PROOFS
  return read(execution).catch((error: unknown) => {
    onError(error)
    return NO_PROOFS
  })
}

/**
 * Whether `target` may skip its re-read before its write: the connector's own write enforces the version, or a
 * probe vouches for the source the target was frozen from. A target frozen with no source (before 0017) is
 * written to whichever source answers its id, which no one probe vouches for: it is always re-read.
 */
export function enforcedFor(ctx: { readonly versionEnforced?: boolean; readonly provenSources?: ReadonlySet<string> }, target: { readonly source: string | null }): boolean {
  return ctx.versionEnforced === true || (target.source !== null && ctx.provenSources?.has(target.source) === true)
}

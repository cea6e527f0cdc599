import type { Kysely } from 'kysely'
import type { Database } from '../store/index.js'
import { VERSION_PROOF_MAX_AGE_MS, type VersionProof } from './version-proof.js'

/** Proof rows read (and their stale ones deleted) at a time: no one query or delete grows with the store. */
const SWEEP_PAGE = 500

/** What a sweep needs of the config as it is now: each resource's actions and sources. */
export interface DeclaredProofPlaces {
  readonly names: readonly string[]
  get(name: string): { readonly config: { readonly actions: Record<string, unknown> }; readonly connector: { readonly sources: readonly string[] } }
}

/**
 * Removes the write probes (`version_proof:` rows of `kv`) that can vouch for nothing any more: older than
 * VERSION_PROOF_MAX_AGE_MS, or of a resource, action or source the config no longer declares. (A reader already
 * refuses them: an old one by its age, the others are never asked for, or fail their digest.) A source declared
 * again later starts without a proof. A row that cannot be read as a proof is left alone: not ours to judge.
 * Every proof row is looked at, SWEEP_PAGE at a time in key order (a page's stale ones deleted before the next is
 * read). No cap on the pages: a cap left whatever lay past it unexamined on every start, however many starts came
 * (the first rows by key, if they still vouch, come first again each time). The walk stays small anyway: each stale
 * row goes as it is seen, so what a start reads is the proofs that vouch (at most one per declared resource, action
 * and source, and one kept before probes named a source) plus what went stale since the last start, and rows that
 * are no proof (Warrant writes none). Returns how many went.
 */
export async function sweepVersionProofs(db: Kysely<Database>, declared: DeclaredProofPlaces, now: number): Promise<number> {
  let removed = 0
  let after: string | null = null
  for (;;) {
    let page = db.selectFrom('kv').select(['key', 'value']).where('key', 'like', 'version_proof:%')
    if (after !== null) page = page.where('key', '>', after)
    const rows = await page.orderBy('key').limit(SWEEP_PAGE).execute()
    const stale = rows.filter((row) => row.key.startsWith('version_proof:') && isStale(parsed(row.value), declared, now)).map((row) => row.key)
    for (let i = 0; i < stale.length; i += 100) await db.deleteFrom('kv').where('key', 'in', stale.slice(i, i + 100)).execute()
    removed += stale.length
    if (rows.length < SWEEP_PAGE) return removed
    after = rows.at(-1)!.key
  }
}

function parsed(value: string): Partial<VersionProof> | null {
  try {
    const proof = JSON.parse(value) as unknown
    return proof !== null && typeof proof === 'object' ? (proof as Partial<VersionProof>) : null
  } catch {
    return null
  }
}

function isStale(proof: Partial<VersionProof> | null, declared: DeclaredProofPlaces, now: number): boolean {
  if (proof === null || typeof proof.resource !== 'string' || typeof proof.action !== 'string') return false
  const at = Date.parse(String(proof.probed_at))
  if (Number.isFinite(at) && now - at >= VERSION_PROOF_MAX_AGE_MS) return true
  if (!declared.names.includes(proof.resource)) return true
  const resource = declared.get(proof.resource)
  if (!Object.hasOwn(resource.config.actions, proof.action)) return true
  return typeof proof.source === 'string' && !resource.connector.sources.includes(proof.source)
}

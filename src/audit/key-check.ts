import type { Kysely } from 'kysely'
import { WarrantError } from '../contract/index.js'
import type { Database } from '../store/index.js'
import { signingKeyId } from './chain.js'
import { chainTip, readChainHead } from './head.js'
import { AUDIT_KEY_ENV, type AuditKeyring, type AuditKeySource } from './keyring.js'

/** Where the configured key comes from, in the words an operator fixes it with. */
export function auditKeySourceLabel(source: AuditKeySource | undefined): string {
  if (source === undefined) return AUDIT_KEY_ENV
  return 'env' in source ? source.env : `file ${source.file}`
}

/**
 * Refuses a process that could not continue the store's chain as it is signed: the end of the chain is signed
 * with a key this keyring lacks (no key at all, or a key without that id). Such a process can append nothing
 * (a keyless append to a signed chain is refused) or only rows the chain's own key cannot verify, so a server
 * started that way answers requests it cannot audit, and a CLI command acts (an approval lands) without its row.
 * Checked before anything runs by the long-running surfaces (serve, mcp) and by every CLI command that changes
 * state; the reading ones (`warrant audit verify`, `token list`, …) still open such a store, to say what they find.
 */
export async function assertChainKeyConfigured(db: Kysely<Database>, keyring: AuditKeyring | null, source: AuditKeySource | undefined): Promise<void> {
  const last = await db.selectFrom('audit_events').select(['seq', 'hash']).orderBy('seq', 'desc').limit(1).executeTakeFirst()
  const tip = chainTip(await readChainHead(db), last ? { seq: Number(last.seq), hash: last.hash } : undefined)
  const signedWith = tip.key_id ?? signingKeyId(tip.hash)
  if (signedWith === null || keyring?.get(signedWith)) return
  const label = auditKeySourceLabel(source)
  const details = { key_id: signedWith, seq: tip.seq, key_source: label }
  if (keyring === null)
    throw new WarrantError(
      'invalid_request',
      `the store's audit chain is signed with audit key "${signedWith}" (up to seq ${tip.seq}), but no audit key is configured: set ${label} (or audit.key in the config) to the key text the chain is signed with. Refused before anything ran: nothing this process did could be audited`,
      details,
    )
  throw new WarrantError(
    'invalid_request',
    `the store's audit chain is signed with audit key "${signedWith}" (up to seq ${tip.seq}), but the configured audit key (${label}) holds ${keyring.ids.join(', ')} only: keep "${signedWith}" as a later line (retired keys verify older rows). Refused before anything ran: the chain would no longer verify`,
    details,
  )
}

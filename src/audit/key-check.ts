import { existsSync } from 'node:fs'
import type { Kysely } from 'kysely'
import { WarrantError } from '../contract/index.js'
import type { AuditEventRow, Database } from '../store/index.js'
import { checkRowHash, signingKeyId, storedRow } from './chain.js'
import { chainTip, checkHead, headOf, readStoredHead, unsignedHeadOverSignedRows, unsignedTipRefusal, type ChainHead, type StoredHead } from './head.js'
import { AUDIT_KEY_ENV, type AuditKeyring, type AuditKeySource } from './keyring.js'

/** Where the configured key comes from, in the words an operator fixes it with. */
export function auditKeySourceLabel(source: AuditKeySource | undefined): string {
  if (source === undefined) return AUDIT_KEY_ENV
  return 'env' in source ? source.env : `file ${source.file}`
}

/**
 * Refuses a process that could not continue the store's chain as it is signed: the end of the chain is signed
 * with a key this keyring lacks (no key at all, or a key without that id), or with a key of the same id that does not
 * verify it (assertKeyVerifiesTip: the key was replaced), or its end is unsigned over signed rows (unsignedTipRefusal:
 * written by someone without the key; with or without a key, this process would extend them). Such a process can append nothing
 * (a keyless append to a signed chain is refused) or only rows the chain's own key cannot verify, so a server
 * started that way answers requests it cannot audit, and a CLI command acts (an approval lands) without its row.
 * Checked before anything runs by the long-running surfaces (serve, mcp) and by every CLI command that changes
 * state; the reading ones (`warrant audit verify`, `token list`, …) still open such a store, to say what they find.
 */
export async function assertChainKeyConfigured(db: Kysely<Database>, keyring: AuditKeyring | null, source: AuditKeySource | undefined): Promise<void> {
  const { head, stored, last, tip, signedWith } = await readSignedTip(db)
  const label = auditKeySourceLabel(source)
  if (signedWith !== null && keyring?.get(signedWith)) return assertKeyVerifiesTip(head, stored, last, keyring, label)
  if (signedWith === null) {
    // keyless too: unsigned rows forged onto a signed chain leave an unsigned tip, and this process would extend them
    const overSigned = await unsignedTipRefusal(db, tip.seq, keyring, { keySetting: `${label}, or audit.key in the config` })
    if (overSigned !== null) throw new WarrantError('invalid_request', `${overSigned.message}. Refused before anything ran`, overSigned.details)
    return
  }
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

/** The chain's end: its signed head, its last row, the tip appends continue from, and the key id that signed it. */
async function readSignedTip(db: Kysely<Database>): Promise<{ head: ChainHead | null; stored: StoredHead; last: AuditEventRow | undefined; tip: ChainHead; signedWith: string | null }> {
  const last = await db.selectFrom('audit_events').selectAll().orderBy('seq', 'desc').limit(1).executeTakeFirst()
  const stored = await readStoredHead(db)
  const head = headOf(stored)
  const tip = chainTip(head, last ? { seq: Number(last.seq), hash: last.hash } : undefined)
  return { head, stored, last, tip, signedWith: tip.key_id ?? signingKeyId(tip.hash) }
}

/**
 * A key with the right id is not yet the right key: a lost key file written anew (`create: true`, whose ids are
 * date-based) holds the chain's id with another secret. Such a process would sign rows the chain's key cannot
 * verify, and a later verify would call the older rows forged. So the key must verify the chain's end as stored:
 * the last row's hash (recomputed by the chain code) and the signed head. Either failing is refused; which of the
 * two happened (the key replaced, or the end altered) only `warrant audit verify` with the right key can tell. A signed
 * end without a signed head is refused first (unsignedHeadOverSignedRows): the first append would seal a cut end.
 */
function assertKeyVerifiesTip(head: ChainHead | null, stored: StoredHead, last: AuditEventRow | undefined, keyring: AuditKeyring, label: string): void {
  const headless = unsignedHeadOverSignedRows(stored, last && { seq: Number(last.seq), hash: last.hash })
  if (headless !== null) throw new WarrantError('invalid_request', `${headless.message}. Refused before anything ran`, { seq: Number(last!.seq), head: headless.head })
  const failed =
    last && checkRowHash(storedRow(last), keyring) === 'mismatch'
      ? { key_id: signingKeyId(last.hash)!, seq: Number(last.seq), what: `row ${last.seq}'s hash` }
      : head && checkHead(head, keyring) === 'mismatch'
        ? { key_id: head.key_id!, seq: head.seq, what: "the chain's signed head" }
        : null
  if (!failed) return
  throw new WarrantError(
    'invalid_request',
    `the configured audit key (${label}) holds audit key "${failed.key_id}", but it is not the key that signed the store's audit chain up to seq ${failed.seq}: ${failed.what} does not verify with it. Either the key was replaced (a lost key file written anew under the same id) or the chain's end was altered: restore the key that signed the chain, then run \`warrant audit verify\`. Refused before anything ran: rows signed now would not verify with the chain's key`,
    { key_id: failed.key_id, seq: failed.seq, key_source: label },
  )
}

/**
 * `audit.key: { file, create: true }` writes a key file when none exists: a new chain's key. For a store whose chain is
 * already signed, the file was lost, and a new random key (on the same day, under the same date-based id) would sign
 * rows the chain's key cannot verify. Refused before the file is written, naming it, for every command.
 */
export async function assertKeyFileCreatable(db: Kysely<Database>, source: AuditKeySource | undefined): Promise<void> {
  if (source === undefined || !('file' in source) || !source.create || existsSync(source.file)) return
  const { tip, signedWith } = await readSignedTip(db)
  if (signedWith === null) return
  throw new WarrantError(
    'invalid_request',
    `audit key file ${source.file} does not exist, and the store's audit chain is already signed with audit key "${signedWith}" (up to seq ${tip.seq}): a new key would not verify it, so none is created (create: true only makes a new chain's key). Restore the key file holding "${signedWith}" from its backup. Refused before anything ran`,
    { key_id: signedWith, seq: tip.seq, key_file: source.file },
  )
}

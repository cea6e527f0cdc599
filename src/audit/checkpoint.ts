import { canonicalJson, WarrantError } from '../contract/index.js'
import { hmacHex, sameHex, type AuditKey, type AuditKeyring } from './keyring.js'

export const CHECKPOINT_FORMAT = 'warrant-audit-checkpoint/1'

/**
 * A signed statement of the chain's head at one moment, kept outside the store (a file, a ticket, another
 * system). A later `verify` against it proves the chain still holds that row with that hash: a chain
 * rewritten or cut back since, even by someone with write access to the store and its head, fails.
 */
export interface AuditCheckpoint {
  readonly format: typeof CHECKPOINT_FORMAT
  readonly seq: number
  readonly hash: string
  readonly at: string
  readonly key_id: string
  readonly mac: string
}

export function signCheckpoint(head: { seq: number; hash: string }, at: string, key: AuditKey): AuditCheckpoint {
  const body = { format: CHECKPOINT_FORMAT, seq: head.seq, hash: head.hash, at, key_id: key.id } as const
  return { ...body, mac: hmacHex(key, canonicalJson(body)) }
}

/** Parses checkpoint JSON; a malformed one is `invalid_request`. */
export function parseCheckpoint(text: string, origin: string): AuditCheckpoint {
  let raw: Record<string, unknown>
  try {
    raw = JSON.parse(text) as Record<string, unknown>
  } catch {
    throw new WarrantError('invalid_request', `checkpoint ${origin} is not JSON`)
  }
  if (
    raw === null ||
    typeof raw !== 'object' ||
    raw.format !== CHECKPOINT_FORMAT ||
    !Number.isSafeInteger(raw.seq) ||
    typeof raw.hash !== 'string' ||
    typeof raw.at !== 'string' ||
    typeof raw.key_id !== 'string' ||
    typeof raw.mac !== 'string'
  )
    throw new WarrantError('invalid_request', `checkpoint ${origin} is not a ${CHECKPOINT_FORMAT} document (format, seq, hash, at, key_id, mac)`)
  return raw as unknown as AuditCheckpoint
}

/** 'ok', 'unknown_key' (verify needs the key that signed it) or 'mismatch' (not signed with that key). */
export function checkCheckpoint(checkpoint: AuditCheckpoint, keyring: AuditKeyring | null): 'ok' | 'unknown_key' | 'mismatch' {
  const key = keyring?.get(checkpoint.key_id)
  if (!key) return 'unknown_key'
  return sameHex(signCheckpoint(checkpoint, checkpoint.at, key).mac, checkpoint.mac) ? 'ok' : 'mismatch'
}

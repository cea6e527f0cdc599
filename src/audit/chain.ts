import { canonicalJson, sha256 } from '../contract/index.js'
import type { AuditEventRow } from '../store/index.js'
import { hmacHex, sameHex, type AuditKey, type AuditKeyring } from './keyring.js'

/** The `prev_hash` of the first row: there is nothing before it. */
export const AUDIT_GENESIS_HASH = `sha256:${'0'.repeat(64)}`

/** The first row's `seq`; every later row is the previous one's plus one. */
export const AUDIT_FIRST_SEQ = 1

/** A stored row without its own hash: exactly what the hash covers. */
export type UnhashedAuditRow = Omit<AuditEventRow, 'hash'>

// One list for the hash and the export, so a row exported can always be re-hashed to the same value.
const HASHED_COLUMNS = [
  'seq',
  'level',
  'at',
  'principal',
  'surface',
  'action',
  'summary',
  'selection_id',
  'plan_id',
  'operation_id',
  'target_id',
  'details',
  'prev_hash',
] as const satisfies readonly (keyof UnhashedAuditRow)[]

/** Every column of `audit_events`, in table order. */
export const AUDIT_COLUMNS = [...HASHED_COLUMNS, 'hash'] as const

// Fails to compile when the table gains a column the lists do not name, which would otherwise go unhashed
// and unexported without a word.
type Unlisted = Exclude<keyof AuditEventRow, (typeof AUDIT_COLUMNS)[number]>
const everyColumnListed: [Unlisted] extends [never] ? true : Unlisted = true
void everyColumnListed

function pickColumns<K extends keyof AuditEventRow>(row: Pick<AuditEventRow, K>, columns: readonly K[]): Pick<AuditEventRow, K> {
  const picked = {} as Pick<AuditEventRow, K>
  for (const column of columns) picked[column] = row[column]
  return picked
}

/**
 * The hash of one row over the canonical JSON of every column but `hash`, with `summary` and `details` as
 * the JSON text stored (so an export can be re-verified byte for byte without the database). With a key:
 * `hmac-sha256:KEY_ID:hex`, which nobody without the key can recompute; without: `sha256:hex`.
 *
 * @example hashAuditRow({ seq: 1, level: 'run', at: '2025-01-31T12:00:00.000Z', ..., prev_hash: AUDIT_GENESIS_HASH })
 */
export function hashAuditRow(row: UnhashedAuditRow, key?: AuditKey | null): string {
  const text = canonicalJson(pickColumns(row, HASHED_COLUMNS))
  return key ? `${SIGNED_PREFIX}${key.id}:${hmacHex(key, text)}` : sha256(text)
}

const SIGNED_PREFIX = 'hmac-sha256:'

/** Whether a stored hash is a keyed signature, and under which key id. */
export function signingKeyId(hash: string): string | null {
  if (!hash.startsWith(SIGNED_PREFIX)) return null
  const rest = hash.slice(SIGNED_PREFIX.length)
  const colon = rest.indexOf(':')
  return colon > 0 ? rest.slice(0, colon) : null
}

/** How a row's hash checks: its content matches, does not, or is signed with a key this keyring lacks. */
export type RowCheck = 'ok' | 'mismatch' | 'unknown_key'

/** Checks a row's hash the way it says it was made: plain sha256, or the HMAC of the key it names. */
export function checkRowHash(row: AuditEventRow, keyring: AuditKeyring | null): RowCheck {
  const keyId = signingKeyId(row.hash)
  if (keyId === null) return row.hash.startsWith('sha256:') && hashAuditRow(row) === row.hash ? 'ok' : 'mismatch'
  const key = keyring?.get(keyId)
  if (!key) return 'unknown_key'
  return sameHex(hashAuditRow(row, key), row.hash) ? 'ok' : 'mismatch'
}

/** Whether a stored row's hash matches its content (a keyed row, only with its key). */
export function rowHashMatches(row: AuditEventRow, keyring: AuditKeyring | null = null): boolean {
  return checkRowHash(row, keyring) === 'ok'
}

/**
 * A row as stored, columns in table order and nothing else (a driver may return more): what the export
 * writes, and what the hash covers plus the hash.
 */
export function storedRow(row: AuditEventRow): AuditEventRow {
  return pickColumns(row, AUDIT_COLUMNS)
}

import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { chmodSync, existsSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { WarrantError } from '../contract/index.js'

/** One HMAC key of the audit chain, named so rows say which key signed them. */
export interface AuditKey {
  readonly id: string
  readonly secret: Buffer
}

/**
 * The keys the audit chain is signed and verified with. They live outside the store (a file or an
 * environment variable), so someone who can write the database still cannot recompute a row's signature.
 * `current` signs new rows; the others are retired keys kept so older rows still verify after a rotation.
 */
export interface AuditKeyring {
  readonly current: AuditKey
  get(id: string): AuditKey | undefined
  readonly ids: readonly string[]
}

/** Where the key comes from: `{ file }` or `{ env }`; `create: true` writes a new key file when none exists. */
export type AuditKeySource = { readonly env: string } | { readonly file: string; readonly create?: boolean }

/** The variable read when the config names no key. */
export const AUDIT_KEY_ENV = 'WARRANT_AUDIT_KEY'

const KEY_ID = /^[A-Za-z0-9_.-]{1,64}$/
const MIN_SECRET_CHARS = 32

/**
 * Parses key text: one key a line, `KEY_ID SECRET` (or `KEY_ID:SECRET`), the first line the current key;
 * blank lines and `#` comments are ignored. A secret is at least 32 characters (e.g. 64 hex digits).
 *
 * @example parseAuditKeys('k2 9f…\nk1 3c…', 'WARRANT_AUDIT_KEY') // current k2, k1 kept to verify old rows
 */
export function parseAuditKeys(text: string, origin: string): AuditKeyring {
  const keys: AuditKey[] = []
  for (const [n, raw] of text.split(/\r?\n/).entries()) {
    const line = raw.trim()
    if (line === '' || line.startsWith('#')) continue
    const m = /^([^\s:]+)[\s:]+(\S+)$/.exec(line)
    if (!m || !KEY_ID.test(m[1]!))
      throw new WarrantError('invalid_request', `audit key ${origin}, line ${n + 1}: expected "KEY_ID SECRET" (key id: letters, digits, _ . -)`)
    if (m[2]!.length < MIN_SECRET_CHARS) throw new WarrantError('invalid_request', `audit key ${origin}, key "${m[1]}": the secret must be at least ${MIN_SECRET_CHARS} characters`)
    if (keys.some((k) => k.id === m[1])) throw new WarrantError('invalid_request', `audit key ${origin}: key id "${m[1]}" appears twice`)
    keys.push({ id: m[1]!, secret: Buffer.from(m[2]!, 'utf8') })
  }
  if (keys.length === 0) throw new WarrantError('invalid_request', `audit key ${origin} holds no key`)
  const byId = new Map(keys.map((k) => [k.id, k]))
  return { current: keys[0]!, get: (id) => byId.get(id), ids: keys.map((k) => k.id) }
}

/**
 * Loads the keyring: the configured source, else `WARRANT_AUDIT_KEY` when set, else none (the chain is
 * then unkeyed, and verify says it only detects accidental or partial tampering).
 */
export function loadAuditKeyring(source: AuditKeySource | undefined, env: NodeJS.ProcessEnv = process.env): AuditKeyring | null {
  if (source === undefined) {
    // Set but empty is a key that failed to arrive (`WARRANT_AUDIT_KEY=${UNSET}`), not a choice to run unsigned:
    // read as none, every command wrote an unsigned chain without a word. Only an unset variable means no key.
    const text = env[AUDIT_KEY_ENV]
    if (text === undefined) return null
    if (text.trim() === '')
      throw new WarrantError(
        'invalid_request',
        `audit key environment variable ${AUDIT_KEY_ENV} is set but empty (or holds only whitespace): set it to the key ("KEY_ID SECRET" lines), or unset it to run without an audit key (an unsigned chain)`,
        { key: AUDIT_KEY_ENV },
      )
    return parseAuditKeys(text, AUDIT_KEY_ENV)
  }
  if ('env' in source) {
    const text = env[source.env]
    if (!text?.trim()) throw new WarrantError('invalid_request', `audit key environment variable ${source.env} is not set (or holds only whitespace)`)
    return parseAuditKeys(text, source.env)
  }
  if (!existsSync(source.file)) {
    if (!source.create) throw new WarrantError('invalid_request', `audit key file ${source.file} does not exist`)
    createAuditKeyFile(source.file)
  }
  let text: string
  try {
    text = readFileSync(source.file, 'utf8')
  } catch {
    throw new WarrantError('invalid_request', `audit key file ${source.file} cannot be read`)
  }
  return parseAuditKeys(text, `file ${source.file}`)
}

/**
 * Writes a new key file (owner-only) with one random key. Written aside and linked into place, so two
 * processes starting at once never read a half-written file: the second link fails and it reads the first's.
 */
export function createAuditKeyFile(path: string, id = `k${new Date().toISOString().slice(0, 10).replaceAll('-', '')}`): void {
  mkdirSync(dirname(path), { recursive: true })
  const aside = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`
  writeFileSync(aside, `# Warrant audit chain key: keep it outside the store. First line signs; older lines verify.\n${id} ${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' })
  try {
    chmodSync(aside, 0o600)
    linkSync(aside, path)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  } finally {
    rmSync(aside, { force: true })
  }
}

/** HMAC-SHA256 of text under a key, as lowercase hex. */
export function hmacHex(key: AuditKey, text: string): string {
  return createHmac('sha256', key.secret).update(text, 'utf8').digest('hex')
}

export function sameHex(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8')
  const y = Buffer.from(b, 'utf8')
  return x.length === y.length && timingSafeEqual(x, y)
}

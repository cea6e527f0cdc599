import { readFileSync } from 'node:fs'
import { WarrantError } from '../contract/index.js'

export type SecretRef = { readonly env: string } | { readonly file: string }

/**
 * Resolves a secret reference; `key` is where the config names it (`connector.credential.secret`). The error names where the secret was expected, never its value. Leading and
 * trailing whitespace is dropped from both kinds alike: a value copied from a file (`KEY="$(cat f)"` in an env
 * file, a mounted Kubernetes secret) often ends in a newline, which an HTTP header cannot carry, so every call
 * would fail mid-operation; and a value that is only whitespace is no secret, refused here as unset.
 *
 * @example readSecret({ env: 'BILLING_TOKEN' })
 */
export function readSecret(ref: SecretRef, env: NodeJS.ProcessEnv = process.env, key?: string): string {
  try {
    return resolveSecret(ref, env)
  } catch (error) {
    // the config key it belongs to, so the engineer knows which credential, not only which variable
    if (key === undefined || !(error instanceof WarrantError)) throw error
    throw new WarrantError(error.code, `${key}: ${error.message}`, { key })
  }
}

function resolveSecret(ref: SecretRef, env: NodeJS.ProcessEnv): string {
  if ('env' in ref) {
    const value = env[ref.env]?.trim()
    if (value === undefined || value === '') throw new WarrantError('invalid_request', `secret environment variable ${ref.env} is not set (or holds only whitespace)`)
    return value
  }
  let value: string
  try {
    value = readFileSync(ref.file, 'utf8').trim()
  } catch {
    throw new WarrantError('invalid_request', `secret file ${ref.file} cannot be read`)
  }
  // An empty secret is no secret: an HMAC keyed with it is one anyone can compute, a credential with it none.
  if (value === '') throw new WarrantError('invalid_request', `secret file ${ref.file} is empty (or holds only whitespace)`)
  return value
}

/** Where a secret comes from, for logs and listings (the value never leaves this module's callers). */
export function describeSecret(ref: SecretRef): string {
  return 'env' in ref ? `env:${ref.env}` : `file:${ref.file}`
}

import { readFileSync } from 'node:fs'
import { WarrantError } from '../contract/index.js'

export type SecretRef = { readonly env: string } | { readonly file: string }

/**
 * Resolves a secret reference. The error names where the secret was expected, never its value.
 *
 * @example readSecret({ env: 'BILLING_TOKEN' })
 */
export function readSecret(ref: SecretRef, env: NodeJS.ProcessEnv = process.env): string {
  if ('env' in ref) {
    const value = env[ref.env]
    if (value === undefined || value === '') throw new WarrantError('invalid_request', `secret environment variable ${ref.env} is not set`)
    return value
  }
  let value: string
  try {
    value = readFileSync(ref.file, 'utf8').trim()
  } catch {
    throw new WarrantError('invalid_request', `secret file ${ref.file} cannot be read`)
  }
  // An empty secret is no secret: an HMAC keyed with it is one anyone can compute, a credential with it none.
  if (value === '') throw new WarrantError('invalid_request', `secret file ${ref.file} is empty`)
  return value
}

/** Where a secret comes from, for logs and listings (the value never leaves this module's callers). */
export function describeSecret(ref: SecretRef): string {
  return 'env' in ref ? `env:${ref.env}` : `file:${ref.file}`
}

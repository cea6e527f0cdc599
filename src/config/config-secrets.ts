import { WarrantError } from '../contract/index.js'
import { readSecret, type SecretRef } from './secret.js'
import type { WarrantConfig } from './schema.js'

/**
 * Every secret the config names, each with its config key: the upstreams' credentials and passwords, the
 * webhooks' signing keys. (The audit key is the audit log's: `loadAuditKeyring`.)
 */
export function secretRefsOf(config: WarrantConfig): { key: string; ref: SecretRef }[] {
  const out: { key: string; ref: SecretRef }[] = []
  for (const [name, resource] of Object.entries(config.resources)) {
    const connector = resource.connector
    if (connector.kind === 'http' && connector.credential) out.push({ key: `resources.${name}.connector.credential.secret`, ref: connector.credential.secret })
    if (connector.kind === 'sql' && connector.password) out.push({ key: `resources.${name}.connector.password`, ref: connector.password })
  }
  config.notifications.webhooks.forEach((w, i) => {
    if (w.secret) out.push({ key: `notifications.webhooks[${i}].secret`, ref: w.secret })
  })
  return out
}

/**
 * Reads every secret the config names and refuses, `invalid_request`, naming each one that cannot be read
 * (its key and the variable or file, never a value). Run before the store is opened: a config that cannot run
 * must change nothing, not create and migrate a store first and then fail on its third resource's token.
 */
export function checkSecrets(config: WarrantConfig, env: NodeJS.ProcessEnv = process.env): void {
  const problems: { key: string; message: string }[] = []
  for (const { key, ref } of secretRefsOf(config)) {
    try {
      readSecret(ref, env, key)
    } catch (error) {
      if (!(error instanceof WarrantError)) throw error
      problems.push({ key, message: error.message })
    }
  }
  // the shape of a refused config's details, so a caller reads both alike
  if (problems.length > 0) throw new WarrantError('invalid_request', problems.map((p) => p.message).join('; '), { problems })
}

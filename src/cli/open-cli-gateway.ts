import { loadConfigFile, type WarrantConfig } from '../config/index.js'
import type { UpstreamCall } from '../connectors/index.js'
import { ensureDemoData } from '../demo/index.js'
import { createLogger, type Gateway, openGateway } from '../gateway/index.js'
import { adoptCliGateway } from './cli-audit.js'
import { resolveConfigPath } from './config-path.js'

/**
 * Loads the config and opens the gateway for a CLI command. With the bundled demo config, the demo table
 * is created and filled first, so every command works on a fresh clone. `executors: true` for the
 * long-running commands (serve, mcp): they resume and execute operations; `'commits'` for `commit --wait`
 * (only its own); a short command never picks up someone else's operation only to stop it when it exits.
 */
export async function openCliGateway(flags: {
  readonly config?: string
  readonly logLevel?: string
  readonly executors?: boolean | 'commits'
  /** Refuse a store whose audit chain is signed with a key this process lacks (serve, mcp: see GatewayOptions). */
  readonly requireAuditKey?: boolean
  /** Also told of every upstream call (after the audit log): `warrant check` reads what its probes answered. */
  readonly onCall?: (call: UpstreamCall) => void
}): Promise<{ gateway: Gateway; config: WarrantConfig; demo: boolean; configPath: string }> {
  const { path, demo } = resolveConfigPath(flags.config)
  const config = loadConfigFile(path)
  if (demo)
    for (const resource of Object.values(config.resources))
      if (resource.connector.kind === 'sql') await ensureDemoData({ url: resource.connector.url })
  const opened = await openGateway({
    config,
    executors: flags.executors ?? false,
    ...(flags.requireAuditKey ? { requireAuditKey: true } : {}),
    log: createLogger({ level: flags.logLevel ?? (process.env.WARRANT_LOG_LEVEL || 'warn') }),
    ...(flags.onCall ? { onCall: flags.onCall } : {}),
  })
  // Inside a `warrant` invocation, the command's audit row is written into this gateway before it closes.
  const gateway = adoptCliGateway(opened)
  return { gateway, config, demo, configPath: path }
}

/**
 * Runs one CLI command against the gateway and always closes it, so a refusal never leaves the store or a
 * connector pool open.
 *
 * @example await withCliGateway(flags, async (gateway) => gateway.operations.get(actor, id))
 */
export async function withCliGateway<T>(flags: { readonly config?: string; readonly onCall?: (call: UpstreamCall) => void }, run: (gateway: Gateway) => Promise<T>): Promise<T> {
  const { gateway } = await openCliGateway({ config: flags.config, ...(flags.onCall ? { onCall: flags.onCall } : {}) })
  try {
    return await run(gateway)
  } finally {
    await gateway.close()
  }
}

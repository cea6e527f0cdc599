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
 * Every command but a reading one (`readOnly`) is refused before it acts when this process could not continue the
 * store's signed audit chain (no key, or not the key that signed it): it would act (an approval, a token) and only
 * its audit row would fail. The check is on by default, so a new command that writes cannot forget it.
 */
export async function openCliGateway(flags: {
  readonly config?: string
  readonly logLevel?: string
  readonly executors?: boolean | 'commits'
  /**
   * The command only reads (search, show, list, audit verify/query/export): it may open a store whose signed chain
   * it cannot continue, and says what it finds. Without it, such a store is refused (GatewayOptions.requireAuditKey).
   */
  readonly readOnly?: boolean
  /**
   * Record the drift of the open plans under this config at open (GatewayOptions.recordConfigMoves): by default
   * where the command is not `readOnly`; `warrant check` never (its probes write to the upstream, never to a plan).
   */
  readonly recordConfigMoves?: boolean
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
    requireAuditKey: flags.readOnly !== true,
    recordConfigMoves: flags.recordConfigMoves ?? flags.readOnly !== true,
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
export async function withCliGateway<T>(
  flags: { readonly config?: string; readonly readOnly?: boolean; readonly recordConfigMoves?: boolean; readonly onCall?: (call: UpstreamCall) => void },
  run: (gateway: Gateway) => Promise<T>,
): Promise<T> {
  const { gateway } = await openCliGateway({
    config: flags.config,
    ...(flags.readOnly ? { readOnly: true } : {}),
    ...(flags.recordConfigMoves === undefined ? {} : { recordConfigMoves: flags.recordConfigMoves }),
    ...(flags.onCall ? { onCall: flags.onCall } : {}),
  })
  try {
    return await run(gateway)
  } finally {
    await gateway.close()
  }
}

import { existsSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { WarrantError } from '../contract/index.js'

/** The bundled demo config, shipped with the package. */
export const DEMO_CONFIG_PATH = resolve(dirname(fileURLToPath(import.meta.url)), '../../config/demo.yaml')

/**
 * Which config to use: `--config`, else `WARRANT_CONFIG`, else `./warrant.yaml` / `./warrant.json` in the
 * working directory, else the bundled demo. An empty `--config` (`--config "$UNSET"`) is refused: read as "none
 * given" it ran the command on the bundled demo instead of the config meant. An empty WARRANT_CONFIG is unset.
 */
export function resolveConfigPath(flag: string | undefined): { readonly path: string; readonly demo: boolean } {
  if (flag !== undefined && flag.trim() === '') throw new WarrantError('invalid_request', '--config is empty: give the path of a config file (YAML or JSON)', { field: '--config' })
  const chosen = flag ?? (process.env.WARRANT_CONFIG || undefined) ?? ['warrant.yaml', 'warrant.yml', 'warrant.json'].find((f) => existsSync(f))
  const path = chosen ? resolve(chosen) : DEMO_CONFIG_PATH
  return { path, demo: path === DEMO_CONFIG_PATH }
}

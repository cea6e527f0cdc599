import { existsSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The bundled demo config, shipped with the package. */
export const DEMO_CONFIG_PATH = resolve(dirname(fileURLToPath(import.meta.url)), '../../config/demo.yaml')

/**
 * Which config to use: `--config`, else `WARRANT_CONFIG`, else `./warrant.yaml` / `./warrant.json` in the
 * working directory, else the bundled demo.
 */
export function resolveConfigPath(flag: string | undefined): { readonly path: string; readonly demo: boolean } {
  const chosen = flag ?? process.env.WARRANT_CONFIG ?? ['warrant.yaml', 'warrant.yml', 'warrant.json'].find((f) => existsSync(f))
  const path = chosen ? resolve(chosen) : DEMO_CONFIG_PATH
  return { path, demo: path === DEMO_CONFIG_PATH }
}

import { readFileSync } from 'node:fs'
import { parse as parseYaml } from 'yaml'
import { parseConfig, type WarrantConfig } from '../src/config/index.js'

/** The bundled demo config on another store and upstream. */
export function demoConfig(store: string, upstreamUrl: string): WarrantConfig {
  const raw = parseYaml(readFileSync(new URL('../config/demo.yaml', import.meta.url), 'utf8')) as Record<string, any>
  raw.store = store
  raw.resources.subscriptions.connector.url = upstreamUrl
  return parseConfig(raw)
}

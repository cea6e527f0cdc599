import { connectorHostsOf, mislabelledHostOf, type ResourceConfig } from '../config/index.js'
import { cellText } from './table-cell.js'

/**
 * Where a resource's connector reaches, as lines for a terminal under an answer's first line: the hosts its reads and
 * writes go to, and a warning where the environment's label names another host. The label ("host demo.sqlite
 * (local)") is words the operator wrote; pointed elsewhere since, the connector is what reads and writes. The review
 * pages say the same (`EnvBanner`). None for a SQLite file or a resource the config does not name.
 *
 * @example reachLines(config.resources.subscriptions) // ['  connector reaches: 127.0.0.1:5432', 'WARNING: …']
 */
export function reachLines(config: ResourceConfig | undefined): string[] {
  if (config === undefined) return []
  const hosts = connectorHostsOf(config.connector)
  if (hosts.length === 0) return []
  const reached = hosts.map((h) => cellText(h)).join(', ')
  const lines = [`  connector reaches: ${reached}`]
  const mislabelled = mislabelledHostOf(config.environment, hosts)
  if (mislabelled !== null)
    lines.push(`WARNING: the environment's label names host ${cellText(mislabelled)}, not ${reached}: the config's environment is mislabelled, and the connector is what reads and writes.`)
  return lines
}

/** The text with `lines` put under its first line (the answer's headline, which names the environment). */
export function underHeadline(text: string, lines: readonly string[]): string {
  if (lines.length === 0) return text
  const end = text.indexOf('\n')
  return end < 0 ? [text, ...lines].join('\n') : `${text.slice(0, end)}\n${lines.join('\n')}${text.slice(end)}`
}

import { readFileSync } from 'node:fs'
import { dirname, isAbsolute, resolve } from 'node:path'
import { parse as parseYaml } from 'yaml'
import { z } from 'zod'
import { WarrantError, duplicateKeyOf, protoKeyPaths } from '../contract/index.js'
import { caseCollisions, checkResource } from './check-resource.js'
import { roundedConfigNumbers, type ConfigProblem } from './exact-numbers.js'
import { configSchema, type WarrantConfig } from './schema.js'
import { unknownKeyMessage } from './unknown-keys.js'

const RESERVED_MESSAGE = 'a reserved name, never a field, parameter or setting (a JavaScript object cannot hold it as its own key)'

/** The config schema with its cross-key rules. */
export const checkedConfigSchema = configSchema.superRefine((config, ctx) => {
  for (const [name, resource] of Object.entries(config.resources)) checkResource(resource, ctx, ['resources', name])
  // one environment name is one place: the same name on two accounts is a block copied and half edited
  const accounts = new Map<string, { account: string; resource: string }>()
  for (const [name, { environment }] of Object.entries(config.resources)) {
    if (environment.account === undefined) continue
    const first = accounts.get(environment.name)
    if (first === undefined) accounts.set(environment.name, { account: environment.account, resource: name })
    else if (first.account !== environment.account)
      ctx.addIssue({
        code: 'custom',
        path: ['resources', name, 'environment', 'account'],
        message: `environment "${environment.name}" is account "${first.account}" in resource "${first.resource}", "${environment.account}" here: give one of them another environment name, or correct the account`,
      })
  }
  for (const { name, earlier } of caseCollisions(Object.keys(config.resources)))
    ctx.addIssue({ code: 'custom', path: ['resources', name], message: `resource "${name}" differs from "${earlier}" only in case; rename one of them` })
})

/**
 * Validates a parsed config object. A bad one is an `invalid_request` error whose message names each key
 * and what was expected.
 *
 * @example parseConfig({ resources: {} }, 'inline')
 */
export function parseConfig(raw: unknown, origin = 'config'): WarrantConfig {
  const result = checkedConfigSchema.safeParse(raw)
  // YAML and JSON both make "__proto__" an own key, which the schema's records would drop without a word
  const reserved = protoKeyPaths(raw).map((key) => ({ key, message: RESERVED_MESSAGE }))
  if (result.success && reserved.length === 0) return result.data
  throw invalidConfig(origin, [...reserved, ...(result.success ? [] : result.error.issues.flatMap((i) => problemsOf(i, raw)))])
}

/** One problem per issue; an unknown key is named in the key path, with what to write instead. */
function problemsOf(issue: z.core.$ZodIssue, raw: unknown): ConfigProblem[] {
  // a schema's own message for unknown keys (a filter's operators) already says what to write
  if (issue.code !== 'unrecognized_keys' || !/^Unrecognized keys?:/.test(issue.message)) return [{ key: issue.path.join('.') || '(root)', message: issue.message }]
  // "__proto__" is named once, as a reserved name (parseConfig)
  return issue.keys.filter((key) => key !== '__proto__').map((key) => ({ key: [...issue.path, key].join('.'), message: unknownKeyMessage(configSchema, raw, issue.path, key) }))
}

function invalidConfig(origin: string, problems: readonly ConfigProblem[]): WarrantError {
  return new WarrantError('invalid_request', `${origin} is not a valid Warrant config:\n${problems.map((p) => `  - ${p.key}: ${p.message}`).join('\n')}`, { problems })
}

/**
 * Reads a YAML or JSON config file. Relative paths inside it (sqlite URLs, secret files) are resolved
 * against the file's folder, so a config means the same thing from any working directory.
 */
export function loadConfigFile(path: string): WarrantConfig {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    throw new WarrantError('invalid_request', `cannot read config file ${path}: ${(error as Error).message}`)
  }
  let raw: unknown
  try {
    raw = path.endsWith('.json') ? JSON.parse(text) : parseYaml(text)
  } catch (error) {
    const message = (error as Error).message
    // V8's excerpt of the JSON can hold the file's line breaks: one line, after the place
    if (path.endsWith('.json')) throw new WarrantError('invalid_request', `config file ${path} is not valid JSON${jsonErrorPlace(text)}: ${message.replace(/\n/g, '\\n')}`)
    throw new WarrantError('invalid_request', `config file ${path} is not valid YAML: ${message}`)
  }
  // JSON.parse keeps the last of a key written twice, where the YAML parser refuses it: the file says two things
  const twice = path.endsWith('.json') ? duplicateKeyOf(text) : null
  if (twice) throw invalidConfig(path, [{ key: twice.path || '(top level)', message: `"${twice.key}" is written twice; JSON keeps only the last, so write it once` }])
  // before the schema: a rounded number is a valid config that says another thing than the file
  const rounded = roundedConfigNumbers(text, path.endsWith('.json'))
  if (rounded.length > 0) throw invalidConfig(path, rounded)
  return resolvePaths(parseConfig(raw, path), dirname(resolve(path)))
}

/**
 * Where JSON.parse stopped, as an editor shows it (` at line 3, column 15`). V8 says "at position 412" for some
 * errors and only a quoted excerpt for others ("Unexpected token"), where the YAML parser names line and column.
 * The place is the longest prefix of the text that is still the start of some JSON document: every shorter prefix
 * fails only for ending early, every longer one for what it holds, so a binary search finds it.
 */
function jsonErrorPlace(text: string): string {
  const endsEarly = (k: number): boolean => {
    try {
      JSON.parse(text.slice(0, k))
      return true
    } catch (error) {
      const message = (error as Error).message
      const at = /at position (\d+)/.exec(message)
      return /end of JSON input|Unterminated string/i.test(message) || (at !== null && Number(at[1]) >= k)
    }
  }
  let good = 0
  let bad = text.length
  while (bad - good > 1) {
    const mid = (good + bad) >> 1
    if (endsEarly(mid)) good = mid
    else bad = mid
  }
  const offset = endsEarly(text.length) ? text.length : good
  const lines = text.slice(0, offset).split('\n')
  return ` at line ${lines.length}, column ${lines.at(-1)!.length + 1}${offset >= text.length ? ' (the end of the file)' : ''}`
}

/** Makes relative sqlite URLs, secret files and the audit key file absolute, against `base` (the config file's folder). */
export function resolvePaths(config: WarrantConfig, base: string): WarrantConfig {
  const sqlite = (url: string) => {
    const m = /^sqlite:(.*)$/.exec(url)
    if (!m || m[1] === ':memory:' || isAbsolute(m[1]!)) return url
    return `sqlite:${resolve(base, m[1]!)}`
  }
  const file = <T extends object>(ref: T): T => ('file' in ref && typeof ref.file === 'string' ? { ...ref, file: resolve(base, ref.file) } : ref)
  const resources = Object.fromEntries(
    Object.entries(config.resources).map(([name, r]) => {
      const connector =
        r.connector.kind === 'sql'
          ? { ...r.connector, url: sqlite(r.connector.url), ...(r.connector.password ? { password: file(r.connector.password) } : {}) }
          : r.connector.credential
            ? { ...r.connector, credential: { ...r.connector.credential, secret: file(r.connector.credential.secret) } }
            : r.connector
      return [name, { ...r, connector }]
    }),
  )
  // Every secret file (an http credential's, a sql password's, a webhook's) is relative to the config file.
  const notifications = config.notifications && {
    ...config.notifications,
    webhooks: config.notifications.webhooks.map((w) => (w.secret ? { ...w, secret: file(w.secret) } : w)),
  }
  const auditKey = config.audit?.key
  const audit = auditKey ? { ...config.audit, key: file(auditKey) } : config.audit
  return { ...config, store: { ...config.store, url: sqlite(config.store.url) }, resources, ...(notifications ? { notifications } : {}), ...(audit ? { audit } : {}) }
}

export type { z }

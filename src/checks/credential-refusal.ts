import type { ResourceConfig } from '../config/index.js'
import type { Connector, ReadPageResult } from '../connectors/index.js'
import type { Guarantee, GuaranteeStatus } from './guarantee.js'
import type { SourceSample } from './probe-reads.js'

const PROMISE = 'a credential the upstream never issued is refused, so an answer with no records is never a refusal in disguise'
const KEYS = ['connector.credential']

/**
 * Asks the first page of each source again with a credential the upstream never issued (`stranger`: the same
 * connector, its secret replaced by a random one). Some APIs answer a credential they do not know, or no longer
 * honour, with 200 and an empty list (or the public subset) instead of 401/403: the day the configured credential
 * expires or is revoked, every walk would then read "nothing" and call it complete, and an empty answer would
 * "prove" absence. Warrant cannot tell such an answer from the truth while it walks; only this probe can, by
 * comparing the two credentials' answers to the same question.
 *
 * `stranger` is null where the question means nothing: a sql upstream (a database refuses a wrong password when
 * it connects) or an http resource with no credential configured.
 */
export async function credentialRefusal(
  config: ResourceConfig,
  connector: Connector,
  stranger: Connector | null,
  samples: readonly SourceSample[],
  options: { readonly pageSize: number; readonly signal?: AbortSignal },
): Promise<Guarantee> {
  if (stranger === null) {
    const why =
      config.connector.kind === 'http'
        ? 'no credential is configured (connector.credential): the upstream is asked without one'
        : config.connector.url.startsWith('sqlite:')
          ? 'a SQLite file has no credential: whoever may read the file reads all of it'
          : 'a database refuses a wrong password when it connects'
    return { name: 'credential_refused', promise: PROMISE, status: 'not_applicable', detail: why, config_keys: [] }
  }
  const findings: { readonly status: GuaranteeStatus; readonly detail: string }[] = []
  for (const sample of samples) findings.push(await judgeSource(sample, connector, stranger, options))
  const status = worst(findings.map((f) => f.status))
  const detail = findings.map((f) => f.detail).join('; ') || 'no source to ask'
  return { name: 'credential_refused', promise: PROMISE, status: findings.length === 0 ? 'unknown' : status, detail, config_keys: status === 'unsafe' || status === 'warning' ? KEYS : [] }
}

async function judgeSource(
  sample: SourceSample,
  connector: Connector,
  stranger: Connector,
  options: { readonly pageSize: number; readonly signal?: AbortSignal },
): Promise<{ readonly status: GuaranteeStatus; readonly detail: string }> {
  const at = `source ${sample.source}`
  const own = sample.results[0]
  if (own?.kind !== 'page') return { status: 'unknown', detail: `${at}: the configured credential's own first page was not read, so there is nothing to compare` }
  const asked = await firstPage(stranger, sample.source, options)
  switch (asked.kind) {
    case 'forbidden':
      return { status: 'holds', detail: `${at}: refused the unknown credential (${asked.status})` }
    case 'refused':
      return { status: 'holds', detail: `${at}: refused the unknown credential${asked.status ? ` (${asked.status})` : ''}: ${asked.message}` }
    case 'page':
      break
    default:
      return { status: 'unknown', detail: `${at}: the read with an unknown credential was not answered (${asked.kind}: ${asked.message}), so the probe cannot tell` }
  }
  const strangerIds = asked.items.map((r) => r.id)
  const ownIds = own.items.map((r) => r.id)
  if (strangerIds.length === 0 && ownIds.length === 0)
    return { status: 'unknown', detail: `${at}: both credentials were answered with no records (an empty source?), so the probe cannot tell` }
  if (sameIds(strangerIds, ownIds))
    return { status: 'warning', detail: `${at}: answered the unknown credential with the same ${ownIds.length} records as the configured one: the upstream does not check this credential (is connector.credential.header the one it reads?)` }
  // HTTP has no snapshot: the records may have moved between the two reads. Asked once more with the configured
  // credential: only an answer that still differs from the stranger's is the upstream telling them apart.
  const again = await firstPage(connector, sample.source, options)
  if (again.kind !== 'page' || !sameIds(again.items.map((r) => r.id), ownIds))
    return { status: 'unknown', detail: `${at}: the records moved between the reads (or the configured credential's second read failed), so the two answers cannot be compared` }
  if (strangerIds.length === 0)
    return {
      status: 'unsafe',
      detail: `${at}: answered the unknown credential with 200 and no records where the configured one reads ${ownIds.length}: the day that credential expires or is revoked, every walk reads nothing and is called complete, and an empty answer "proves" absence`,
    }
  return {
    status: 'unsafe',
    detail: `${at}: answered the unknown credential with other records (${strangerIds.length} against ${ownIds.length}, a public subset?) instead of refusing it: the day the configured credential expires or is revoked, walks read that subset and call it complete`,
  }
}

async function firstPage(connector: Connector, source: string, options: { readonly pageSize: number; readonly signal?: AbortSignal }): Promise<ReadPageResult> {
  const session = await connector.openSession()
  try {
    return await session.readPage({ source, filter: {}, position: null, pageSize: options.pageSize, ...(options.signal ? { signal: options.signal } : {}) })
  } finally {
    await session.close()
  }
}

function sameIds(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false
  const set = new Set(b)
  return a.every((id) => set.has(id))
}

const RANK: Record<GuaranteeStatus, number> = { not_applicable: 0, holds: 1, warning: 2, unknown: 3, fails_closed: 4, unsafe: 5 }

function worst(statuses: readonly GuaranteeStatus[]): GuaranteeStatus {
  return statuses.reduce<GuaranteeStatus>((w, s) => (RANK[s] > RANK[w] ? s : w), 'not_applicable')
}

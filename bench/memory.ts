import { readFileSync } from 'node:fs'
import { createCliWorkspace } from '../test/support/cli-config.js'
import { caller } from '../test/operations/support/flow.js'
import { issueTokens, startServe, stopServe } from '../test/operations/support/serve-process.js'

/** One process's peak resident set and what it held before the freeze, in MB. */
export interface FreezeRss {
  readonly members: number
  readonly peak_rss_mb: number
  readonly rss_before_mb: number
}

/** VmHWM (peak) or VmRSS (now) of a process, in MB, from /proc. */
function residentMb(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  const kb = new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]
  if (kb === undefined) throw new Error(`no ${field} in /proc/${pid}/status`)
  return Number(kb) / 1024
}

/**
 * Peak RSS of `warrant serve` as installed (`bin/warrant.js`, the compiled build, which bench/run.ts rebuilds from the sources first)
 * while an agent freezes every one of `count` SQLite rows into its SQLite store over the HTTP API; `runs` fresh
 * processes, each measured once (a process's high-water mark cannot be reset).
 */
export async function benchFreezeRss(count: number, runs: number): Promise<FreezeRss[]> {
  const workspace = await createCliWorkspace({ count, edit: (raw) => (raw.server = { host: '127.0.0.1', port: 0 }) })
  const out: FreezeRss[] = []
  try {
    const { agentToken } = await issueTokens(workspace.configPath, { resource: 'subscriptions', actions: ['pause_collection'] })
    for (let run = 0; run < runs; run++) {
      const served = await startServe(workspace.configPath, { compiled: true })
      try {
        const pid = served.child.pid!
        const before = residentMb(pid, 'VmRSS')
        const selection = await caller(served.base, agentToken)('POST', '/v1/resources/subscriptions/selections', { filter: {}, page_size: 1000 })
        if (selection.status !== 201 || selection.body.count !== count) throw new Error(`the freeze answered ${selection.status}: ${JSON.stringify(selection.body).slice(0, 500)}`)
        out.push({ members: selection.body.count, peak_rss_mb: residentMb(pid, 'VmHWM'), rss_before_mb: before })
      } finally {
        await stopServe(served.child, 'SIGTERM')
      }
    }
    return out
  } finally {
    await workspace.drop()
  }
}

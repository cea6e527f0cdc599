import type { ChildProcess } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createTempDir } from '../test/support/stores.js'
import { caller, selectProposeApprove, waitForOperation } from '../test/operations/support/flow.js'
import { issueUsersTokens, startServe, stopServe } from '../test/operations/support/serve-process.js'
import { startUsersUpstream, usersResourceConfig } from '../test/operations/support/users-upstream.js'
import { interleaved, median, type Figure } from './measure.js'

const CONCURRENCY = 16

/**
 * Executing `count` targets over HTTP through `warrant serve`'s API as an agent does (commit the bulk action,
 * poll the operation until it ends; selecting, proposing and approving are not timed), against a bare client
 * loop of the same If-Match PATCHes from 16 workers, on the same loopback upstream. While Warrant executes,
 * /health is asked every 10 ms on the same server: its p99 is the responsiveness figure (SQLite store).
 */
export async function benchExecuteHttp(count: number, runs: number): Promise<Figure[]> {
  const upstream = await startUsersUpstream(count)
  const dir = await createTempDir('warrant-bench-exec-')
  const configPath = join(dir.path, 'warrant.json')
  writeFileSync(
    configPath,
    JSON.stringify({
      store: `sqlite:${join(dir.path, 'warrant.db')}`,
      server: { host: '127.0.0.1', port: 0 },
      execution: { concurrency: CONCURRENCY },
      resources: { users: usersResourceConfig(upstream.origin) },
    }),
  )
  let child: ChildProcess | null = null
  try {
    const { agentToken, reviewerToken } = await issueUsersTokens(configPath)
    const served = await startServe(configPath)
    child = served.child
    const agent = caller(served.base, agentToken)
    const reviewer = caller(served.base, reviewerToken)
    const health: number[] = []
    let round = 0
    let pending: { selection: any; role: string } | null = null

    // untimed: a selection of every user, a plan to set a new role, approved
    const prepare = async () => {
      round += 1
      const role = `w${round}`
      const { selection } = await selectProposeApprove(agent, [reviewer], 'users', { filter: { status: 'active' } }, { type: 'set_role', role })
      if (selection.count !== count) throw new Error(`selected ${selection.count} of ${count}`)
      pending = { selection, role }
    }
    const warrant = async () => {
      const { selection, role } = pending!
      let probing = true
      const probe = (async () => {
        while (probing) {
          const started = performance.now()
          const res = await fetch(`${served.base}/health`)
          await res.arrayBuffer()
          health.push(performance.now() - started)
          await new Promise((r) => setTimeout(r, 10))
        }
      })()
      try {
        const commit = await agent('POST', '/v1/resources/users/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action: { type: 'set_role', role } }, { 'idempotency-key': `bench-${role}` })
        if (commit.status !== 202) throw new Error(`commit answered ${commit.status}: ${JSON.stringify(commit.body)}`)
        const operation = await waitForOperation(agent, commit.body.operation_id, 600_000)
        if (operation.counts.succeeded !== count) throw new Error(`operation ended ${operation.state}: ${JSON.stringify(operation.counts)}`)
      } finally {
        probing = false
        await probe
      }
    }
    const bare = async () => {
      round += 1
      const ids = [...upstream.users.keys()]
      let next = 0
      const worker = async () => {
        while (next < ids.length) {
          const id = ids[next++]!
          const res = await fetch(`${upstream.origin}/users/${encodeURIComponent(id)}`, {
            method: 'PATCH',
            headers: { 'content-type': 'application/json', 'if-match': String(upstream.users.get(id)!.version) },
            body: JSON.stringify({ role: `b${round}` }),
          })
          await res.arrayBuffer()
          if (res.status !== 200) throw new Error(`bare PATCH ${id} answered ${res.status}`)
        }
      }
      await Promise.all(Array.from({ length: CONCURRENCY }, worker))
    }
    await prepare()
    // throughput ratio: Warrant's rate over the bare loop's is the bare loop's time over Warrant's
    // after every run (the bare loop changes the versions too), so each Warrant run commits a fresh selection
    const r = await interleaved(runs, bare, warrant, prepare)
    const throughput: Figure = {
      name: `execute ${count.toLocaleString('en')} targets over HTTP, concurrency ${CONCURRENCY} (warrant serve, SQLite store)`,
      baseline: `a bare loop of the same If-Match PATCHes from ${CONCURRENCY} workers`,
      ratio: 1 / r.ratio,
      range: [1 / r.range[1], 1 / r.range[0]],
      warrantMs: r.warrantMs,
      baselineMs: r.baselineMs,
      runs,
      goal: '≥ 0.8',
      met: 1 / r.ratio >= 0.8,
      note: `${((count / r.warrantMs) * 1000).toFixed(0)} targets/s against ${((count / r.baselineMs) * 1000).toFixed(0)}/s`,
    }
    const sorted = [...health].sort((a, b) => a - b)
    const p99 = sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? NaN
    const healthFigure: Figure = {
      name: `/health p99 while a ${count.toLocaleString('en')}-target operation runs (SQLite store, HTTP upstream)`,
      baseline: `none (absolute: ${sorted.length} requests, one every 10 ms; median ${median(sorted).toFixed(1)} ms, max ${(sorted[sorted.length - 1] ?? NaN).toFixed(1)} ms)`,
      ratio: p99,
      range: [p99, p99],
      warrantMs: 0,
      baselineMs: 0,
      runs: 1,
      goal: '< 50 ms',
      met: p99 < 50,
      unit: 'ms',
    }
    return [throughput, healthFigure]
  } finally {
    if (child) await stopServe(child, 'SIGTERM')
    await upstream.close()
    await dir.drop()
  }
}

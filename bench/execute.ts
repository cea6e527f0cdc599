import type { ChildProcess } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import { join } from 'node:path'
import BetterSqlite3 from 'better-sqlite3'
import { createCliWorkspace, runWarrant } from '../test/support/cli-config.js'
import pg from 'pg'
import { ensureDemoData } from '../src/demo/index.js'
import { createTempDir, createTestPostgresDatabase } from '../test/support/stores.js'
import { caller, selectProposeApprove, type Caller } from '../test/operations/support/flow.js'
import { FINISHED_STATES } from '../src/operations/index.js'
import { issueTokens, startServe, stopServe } from '../test/operations/support/serve-process.js'
import { startUsersUpstream, usersResourceConfig } from '../test/operations/support/users-upstream.js'
import { interleaved, median, type Figure } from './measure.js'

const CONCURRENCY = 16
/**
 * The sql resource's `write_window` in the sql figures: targets per conditional UPDATE (the executor's default
 * is the concurrency). Labelled in each figure, since it is a setting a user chooses.
 */
const SQL_WRITE_WINDOW = 64

/** One execution figure: Warrant (through `warrant serve`) against a bare loop of the same writes. */
interface ExecutionCase {
  readonly label: string
  readonly baseline: string
  readonly count: number
  readonly runs: number
  readonly resource: string
  readonly base: string
  /** the `warrant serve` process, whose CPU time per run is reported */
  readonly serverPid: number
  readonly agent: Caller
  readonly reviewers: readonly Caller[]
  /** round n's selection filter and action, from the targets' state as the last run left it */
  change(round: number): { readonly filter: Record<string, unknown>; readonly action: Record<string, unknown> }
  /** the bare loop of round n */
  bare(round: number): Promise<void>
  /** called once a Warrant run has changed the targets */
  changed?(): void
}

/**
 * Selecting, proposing and approving are not timed; Warrant's time runs from the commit (POST bulk-actions, as an
 * agent does) to the operation's end as polled over the API. While it runs, /health is asked every 10 ms on the
 * same server. Warrant and the bare loop alternate, each round changing the targets back.
 */
async function measureExecution(c: ExecutionCase): Promise<Figure[]> {
  const health: number[] = []
  const serverCpuPerTarget: number[] = []
  let round = 0
  let pending: { selection: any; action: Record<string, unknown> } | null = null
  const prepare = async () => {
    round += 1
    const { filter, action } = c.change(round)
    const { selection } = await selectProposeApprove(c.agent, c.reviewers, c.resource, { filter }, action)
    if (selection.count !== c.count) throw new Error(`round ${round} selected ${selection.count} of ${c.count}`)
    pending = { selection, action }
  }
  const warrant = async () => {
    const { selection, action } = pending!
    const probe = probeHealth(c.base, health)
    const cpuBefore = processCpuMs(c.serverPid)
    try {
      const commit = await c.agent('POST', `/v1/resources/${c.resource}/bulk-actions`, { selection_id: selection.selection_id, expected_digest: selection.digest, action }, { 'idempotency-key': `bench-${round}` })
      if (commit.status !== 202) throw new Error(`commit answered ${commit.status}: ${JSON.stringify(commit.body)}`)
      const operation = await waitForOperation(c.agent, commit.body.operation_id, 600_000)
      if (operation.counts.succeeded !== c.count) throw new Error(`operation ended ${operation.state}: ${JSON.stringify(operation.counts)}`)
      serverCpuPerTarget.push(((processCpuMs(c.serverPid) - cpuBefore) * 1000) / c.count)
      c.changed?.()
    } finally {
      await probe.stop()
    }
  }
  const bare = async () => {
    round += 1
    await c.bare(round)
  }
  await prepare()
  // after every run (the bare loop changes the targets too), so each Warrant run commits a fresh selection
  const r = await interleaved(c.runs, bare, warrant, prepare)
  // throughput ratio: Warrant's rate over the bare loop's is the bare loop's time over Warrant's
  const throughput: Figure = {
    name: `execute ${c.count.toLocaleString('en')} targets, ${c.label}`,
    baseline: c.baseline,
    ratio: 1 / r.ratio,
    range: [1 / r.range[1], 1 / r.range[0]],
    warrantMs: r.warrantMs,
    baselineMs: r.baselineMs,
    runs: c.runs,
    goal: c.label.includes('over HTTP') ? '≥ 0.8' : '≥ 0.5',
    met: 1 / r.ratio >= (c.label.includes('over HTTP') ? 0.8 : 0.5),
    note: `${((c.count / r.warrantMs) * 1000).toFixed(0)} targets/s against ${((c.count / r.baselineMs) * 1000).toFixed(0)}/s; warrant serve's CPU per target ${median(serverCpuPerTarget).toFixed(0)} µs (${Math.min(...serverCpuPerTarget).toFixed(0)}–${Math.max(...serverCpuPerTarget).toFixed(0)}, every thread, the /health probes included)`,
  }
  return [throughput, healthFigure(`/health p99 while a ${c.count.toLocaleString('en')}-target operation runs (${c.label})`, health)]
}

/** Asks `/health` every 10 ms, adding each answer's latency to `into`, until `stop` (which waits for the last). */
function probeHealth(base: string, into: number[]): { stop(): Promise<void> } {
  let probing = true
  const running = (async () => {
    while (probing) {
      const started = performance.now()
      await (await fetch(`${base}/health`)).arrayBuffer()
      into.push(performance.now() - started)
      await new Promise((r) => setTimeout(r, 10))
    }
  })()
  return {
    stop: async () => {
      probing = false
      await running
    },
  }
}

/** The p99 of `/health` latencies asked every 10 ms while something ran: an absolute figure, goal under 50 ms. */
function healthFigure(name: string, latencies: readonly number[]): Figure {
  const sorted = [...latencies].sort((a, b) => a - b)
  const p99 = sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? NaN
  return {
    name,
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
}

/** Every past-due subscription with its collection active, so each round moves the same set; and their count. */
const PAST_DUE_ACTIVE = `update subscriptions set collection = 'active', pause_reason = '' where status = 'past_due'`
const PAST_DUE_COUNT = `select count(*) as n from subscriptions where status = 'past_due'`

/** A workspace config served on a free loopback port, executing CONCURRENCY targets at once. */
function servedAtConcurrency(raw: Record<string, any>): void {
  raw.server = { host: '127.0.0.1', port: 0 }
  raw.execution = { ...(raw.execution ?? {}), concurrency: CONCURRENCY }
}

/** The agent and reviewers of a served gateway, and its process, as measureExecution takes them. */
function callersOf(served: { readonly base: string; readonly child: ChildProcess }, agentToken: string, reviewerTokens: readonly string[]) {
  const { base } = served
  return { base, serverPid: served.child.pid!, agent: caller(base, agentToken), reviewers: reviewerTokens.map((t) => caller(base, t)) }
}

/**
 * CPU time a process has used so far (user and system, every thread), in ms, from /proc. Wall time on a shared
 * machine moves with whatever else runs; the server's CPU per target is the steadier measure of Warrant's own cost.
 */
function processCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS
}
/** USER_HZ: the unit of /proc/PID/stat's times (100 on Linux on every architecture Node runs on) */
const CLOCK_TICKS = 100

/** The users resource reading as many records at once as it writes (its batch re-reads, before each batch's writes). */
function withReadConcurrency(resource: Record<string, any>): Record<string, unknown> {
  return { ...resource, connector: { ...resource.connector, read_concurrency: CONCURRENCY } }
}

/** `count` users on a loopback HTTP upstream; Warrant's `set_role` against a bare loop of the same If-Match PATCHes from 16 workers. */
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
      resources: { users: withReadConcurrency(usersResourceConfig(upstream.origin, { batch: { ids_param: 'ids' } })) },
    }),
  )
  let child: ChildProcess | null = null
  const bareAgent = new http.Agent({ keepAlive: true })
  try {
    const { agentToken, reviewerTokens } = await issueTokens(configPath, { resource: 'users', actions: ['set_role'] })
    // as an operator would before a bulk change: prove that the upstream refuses a stale If-Match (the operation
    // then trusts each batch's read instead of reading every target again alone)
    const probe = await runWarrant(['check', 'users', '--write-probe', [...upstream.users.keys()][0]!, '--json', '--config', configPath], dir.path)
    if (!probe.stdout.includes('"write_probe.set_role"')) throw new Error(`the write probe did not run: ${probe.stdout}${probe.stderr}`)
    const served = await startServe(configPath, { compiled: true })
    child = served.child
    return await measureExecution({
      label: `over HTTP, concurrency ${CONCURRENCY} (warrant serve, SQLite store, get.batch, after a write probe that held)`,
      baseline: `a bare loop of the same If-Match PATCHes from ${CONCURRENCY} workers (node:http, kept-alive connections)`,
      count,
      runs,
      resource: 'users',
      ...callersOf(served, agentToken, reviewerTokens),
      change: (round) => ({ filter: { status: 'active' }, action: { type: 'set_role', role: `r${round}` } }),
      bare: async (round) => {
        const ids = [...upstream.users.keys()]
        let next = 0
        const worker = async () => {
          while (next < ids.length) {
            const id = ids[next++]!
            const status = await patch(bareAgent, new URL(`/users/${encodeURIComponent(id)}`, upstream.origin), String(upstream.users.get(id)!.version), JSON.stringify({ role: `r${round}` }))
            if (status !== 200) throw new Error(`bare PATCH ${id} answered ${status}`)
          }
        }
        await Promise.all(Array.from({ length: CONCURRENCY }, worker))
      },
    })
  } finally {
    bareAgent.destroy()
    if (child) await stopServe(child, 'SIGTERM')
    await upstream.close()
    await dir.drop()
  }
}

/**
 * One If-Match PATCH by node:http on kept-alive connections, the body read whole; its status. The bare loop's
 * client is the cheapest Node has (Warrant's own client is node:http too; fetch costs several times the CPU).
 */
function patch(agent: http.Agent, url: URL, version: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'PATCH', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'if-match': version } }, (res) => {
      res.on('data', () => undefined)
      res.on('end', () => resolve(res.statusCode ?? 0))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(body)
  })
}

/**
 * The demo's `sql` resource on SQLite (past-due subscriptions, about a fifth of the rows): Warrant's
 * pause_collection / resume_collection against a bare loop of the same conditional UPDATEs (id, version and
 * precondition in the WHERE, the new version returned) on one connection with the driver's defaults, as the
 * connector opens it.
 */
export async function benchExecuteSql(rows: number, runs: number): Promise<Figure[]> {
  const workspace = await createCliWorkspace({
    count: rows,
    edit: (raw) => {
      servedAtConcurrency(raw)
      raw.resources.subscriptions.connector.write_window = SQL_WRITE_WINDOW
    },
  })
  const lite = new BetterSqlite3(join(workspace.dir, 'demo.db'))
  let child: ChildProcess | null = null
  try {
    // every past-due subscription starts with collection active, so each round moves the same set
    lite.prepare(PAST_DUE_ACTIVE).run()
    const count = (lite.prepare(PAST_DUE_COUNT).get() as { n: number }).n
    const { agentToken, reviewerTokens } = await issueTokens(workspace.configPath, { resource: 'subscriptions', actions: ['pause_collection', 'resume_collection'] }, 2)
    const served = await startServe(workspace.configPath, { compiled: true })
    child = served.child
    // each run, Warrant's or the bare loop's, pauses the past-due subscriptions or resumes them
    const turns = pauseAndResume()
    const update = lite.prepare(
      `update subscriptions set collection = ?, pause_reason = ?, version = version + 1, updated_at = ? where id = ? and version = ? and status = 'past_due' and collection = ? returning id, version`,
    )
    const targets = lite.prepare(`select id, version from subscriptions where status = 'past_due' and collection = ? order by id`)
    return await measureExecution({
      label: `sql on SQLite (warrant serve, SQLite store, write_window ${SQL_WRITE_WINDOW})`,
      baseline: 'a bare loop of the same conditional UPDATEs',
      count,
      runs,
      resource: 'subscriptions',
      ...callersOf(served, agentToken, reviewerTokens),
      change: turns.change,
      bare: async (round) => {
        const [from, to, reason] = turns.bareRound(round)
        const list = targets.all(from) as { id: string; version: number }[]
        if (list.length !== count) throw new Error(`the bare loop found ${list.length} of ${count} targets`)
        const started = new Date().toISOString()
        for (const t of list) if (update.all(to, reason, started, t.id, t.version, from).length !== 1) throw new Error(`bare UPDATE ${t.id} changed nothing`)
        turns.flip()
      },
      changed: turns.flip,
    })
  } finally {
    if (child) await stopServe(child, 'SIGTERM')
    lite.close()
    await workspace.drop()
  }
}

/** The demo's past-due subscriptions paused and resumed in turn (by Warrant or by a bare loop), from active. */
function pauseAndResume() {
  let paused = false
  return {
    change: (round: number) =>
      !paused
        ? { filter: { status: 'past_due', collection: 'active' }, action: { type: 'pause_collection', reason: `bench ${round}` } }
        : { filter: { status: 'past_due', collection: 'paused' }, action: { type: 'resume_collection' } },
    /** the bare loop's round: the collection it moves from and to, and the reason it writes */
    bareRound: (round: number): [string, string, string] => (!paused ? ['active', 'paused', `bench ${round}`] : ['paused', 'active', '']),
    flip: () => {
      paused = !paused
    },
  }
}

/**
 * The demo's sql resource on PostgreSQL, with a PostgreSQL store, through `warrant serve`: the past-due rows
 * paused and resumed in turn, against the same conditional UPDATEs from CONCURRENCY workers on a pool of as many.
 */
export async function benchExecuteSqlPostgres(rows: number, runs: number): Promise<Figure[]> {
  const upstreamDb = await createTestPostgresDatabase()
  const storeDb = await createTestPostgresDatabase()
  const pool = new pg.Pool({ connectionString: upstreamDb.url, max: CONCURRENCY })
  let child: ChildProcess | null = null
  let workspace: Awaited<ReturnType<typeof createCliWorkspace>> | null = null
  try {
    await ensureDemoData({ url: upstreamDb.url, count: rows })
    workspace = await createCliWorkspace({
      count: 1,
      edit: (raw) => {
        raw.store = storeDb.url
        raw.resources.subscriptions.connector.url = upstreamDb.url
        raw.resources.subscriptions.connector.write_window = SQL_WRITE_WINDOW
        servedAtConcurrency(raw)
      },
    })
    await pool.query(PAST_DUE_ACTIVE)
    const count = Number((await pool.query(PAST_DUE_COUNT)).rows[0].n)
    const { agentToken, reviewerTokens } = await issueTokens(workspace.configPath, { resource: 'subscriptions', actions: ['pause_collection', 'resume_collection'] }, 2)
    const served = await startServe(workspace.configPath, { compiled: true })
    child = served.child
    const turns = pauseAndResume()
    return await measureExecution({
      label: `sql on PostgreSQL (warrant serve, PostgreSQL store, concurrency ${CONCURRENCY}, write_window ${SQL_WRITE_WINDOW})`,
      baseline: `the same conditional UPDATEs from ${CONCURRENCY} workers on a pool of ${CONCURRENCY}`,
      count,
      runs,
      resource: 'subscriptions',
      ...callersOf(served, agentToken, reviewerTokens),
      change: turns.change,
      bare: async (round) => {
        const [from, to, reason] = turns.bareRound(round)
        const list = (await pool.query(`select id, version from subscriptions where status = 'past_due' and collection = $1 order by id`, [from])).rows as { id: string; version: number }[]
        if (list.length !== count) throw new Error(`the bare loop found ${list.length} of ${count} targets`)
        const started = new Date().toISOString()
        let next = 0
        const worker = async () => {
          while (next < list.length) {
            const t = list[next++]!
            const updated = await pool.query(
              `update subscriptions set collection = $1, pause_reason = $2, version = version + 1, updated_at = $3 where id = $4 and version = $5 and status = 'past_due' and collection = $6 returning id, version`,
              [to, reason, started, t.id, t.version, from],
            )
            if (updated.rowCount !== 1) throw new Error(`bare UPDATE ${t.id} changed nothing`)
          }
        }
        await Promise.all(Array.from({ length: CONCURRENCY }, worker))
        turns.flip()
      },
      changed: turns.flip,
    })
  } finally {
    if (child) await stopServe(child, 'SIGTERM')
    await pool.end()
    await workspace?.drop()
    await storeDb.drop()
    await upstreamDb.drop()
  }
}

/**
 * `/health` while the server does both heavy things at once on a SQLite store and SQLite data: freezing a
 * selection of every row, and executing an operation over the past-due ones whose collection is active. Asked every 10 ms
 * from before the commit until both have ended; the figure is the p99 of those answers' latency.
 */
export async function benchHealthUnderLoad(rows: number): Promise<Figure> {
  const workspace = await createCliWorkspace({
    count: rows,
    edit: (raw) => {
      servedAtConcurrency(raw)
      raw.resources.subscriptions.connector.write_window = SQL_WRITE_WINDOW
    },
  })
  let child: ChildProcess | null = null
  try {
    const { agentToken, reviewerTokens } = await issueTokens(workspace.configPath, { resource: 'subscriptions', actions: ['pause_collection'] }, 2)
    const served = await startServe(workspace.configPath, { compiled: true })
    child = served.child
    const { agent, reviewers } = callersOf(served, agentToken, reviewerTokens)
    const action = { type: 'pause_collection', reason: 'bench under load' }
    const { selection } = await selectProposeApprove(agent, reviewers, 'subscriptions', { filter: { status: 'past_due', collection: 'active' } }, action)
    const health: number[] = []
    const probe = probeHealth(served.base, health)
    let frozen = 0
    try {
      const commit = await agent('POST', '/v1/resources/subscriptions/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action }, { 'idempotency-key': 'bench-under-load' })
      if (commit.status !== 202) throw new Error(`commit answered ${commit.status}: ${JSON.stringify(commit.body)}`)
      const [freeze, operation] = await Promise.all([
        agent('POST', '/v1/resources/subscriptions/selections', { filter: {}, page_size: 1000 }),
        waitForOperation(agent, commit.body.operation_id, 1_800_000),
      ])
      if (freeze.status !== 201 || freeze.body.count !== rows) throw new Error(`the freeze answered ${freeze.status}: ${JSON.stringify(freeze.body).slice(0, 300)}`)
      if (operation.counts.succeeded !== selection.count) throw new Error(`operation ended ${operation.state}: ${JSON.stringify(operation.counts)}`)
      frozen = freeze.body.count
    } finally {
      await probe.stop()
    }
    return healthFigure(`/health p99 while ${frozen.toLocaleString('en')} rows freeze and a ${selection.count.toLocaleString('en')}-target operation runs (SQLite store and data)`, health)
  } finally {
    if (child) await stopServe(child, 'SIGTERM')
    await workspace.drop()
  }
}

/**
 * Waits for the operation as an agent does (`wait_ms`, as MCP's get_operation): the server answers as the operation
 * ends, so the figure holds no client polling interval.
 */
async function waitForOperation(as: Caller, operationId: string, timeoutMs: number): Promise<any> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const res = await as('GET', `/v1/operations/${operationId}?wait_ms=${Math.min(30_000, Math.max(1, deadline - Date.now()))}`)
    if (res.status !== 200) throw new Error(`GET operation answered ${res.status}: ${JSON.stringify(res.body)}`)
    if (FINISHED_STATES.has(res.body.state)) return res.body
    if (Date.now() > deadline) throw new Error(`operation ${operationId} did not finish in ${timeoutMs} ms: ${JSON.stringify(res.body)}`)
  }
}

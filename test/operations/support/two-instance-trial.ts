import assert from 'node:assert/strict'
import type { ChildProcess } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createStore, type Store } from '../../../src/store/index.js'
import { createTempDir, createTestPostgresDatabase } from '../../support/stores.js'
import { allResults, caller, selectProposeApprove, waitForOperation } from './flow.js'
import { issueUsersTokens, startServe, stopServe } from './serve-process.js'
import { startUsersUpstream, type UsersUpstream, usersResourceConfig } from './users-upstream.js'

/**
 * Scale-out on one PostgreSQL store, with real `warrant serve` processes (the CLI) and a loopback HTTP upstream
 * that counts the PATCHes it receives per record:
 *
 * 1. Two instances run; an operation is committed on the first. The instance holding its lease is killed with
 *    SIGKILL mid-operation; the other takes the operation over before the dead instance's lease would have
 *    expired, and finishes it.
 * 2. The survivor stops; a fresh instance runs a second operation and is killed mid-way; a restart of it resumes
 *    that operation at once, again before the old lease would have expired.
 *
 * Each time: no record was written twice, the ledger agrees with the upstream (after reconciling the targets in
 * flight at the kill, the ledger's succeeded count is the number of writes the upstream applied). Used by the
 * suite (small) and by bench/two-instance.ts (larger); it asserts as it goes and returns what it measured.
 */

export interface TwoInstanceOptions {
  readonly targets: number
  /** long enough that a takeover before expiry can only come from knowing the holder is dead */
  readonly leaseSeconds: number
  readonly concurrency: number
  /** how long the upstream takes per PATCH */
  readonly writeDelayMs: number
}

export interface PhaseReport {
  readonly operation_id: string
  readonly in_flight_at_kill: number
  /** from the kill to the next PATCH the upstream received (sent by the instance that took over) */
  readonly takeover_ms: number
  /** how much of the killed instance's lease was left when the next PATCH arrived */
  readonly lease_left_ms: number
  readonly succeeded: number
  readonly unknown: number
  readonly writes_applied: number
  readonly max_writes_per_record: number
  readonly targets_per_second_after_takeover: number
}

interface Phase {
  readonly action: Record<string, unknown>
  readonly key: string
}

export async function runTwoInstanceTrial(options: TwoInstanceOptions): Promise<{ takeover: PhaseReport; restart: PhaseReport }> {
  const upstream = await startUsersUpstream(options.targets)
  const writeTimes: number[] = []
  upstream.onWrite = (_id, n) => {
    writeTimes[n - 1] = Date.now()
    return { delayMs: options.writeDelayMs }
  }
  const dir = await createTempDir('warrant-two-')
  const pg = await createTestPostgresDatabase()
  const configPath = join(dir.path, 'warrant.json')
  writeFileSync(
    configPath,
    JSON.stringify({
      store: pg.url,
      server: { host: '127.0.0.1', port: 0 },
      execution: { concurrency: options.concurrency, batch_size: 20, lease_seconds: options.leaseSeconds },
      resources: { users: usersResourceConfig(upstream.origin) },
    }),
  )
  const children: ChildProcess[] = []
  const serve = async () => {
    const started = await startServe(configPath)
    children.push(started.child)
    return started
  }
  const store = await createStore({ url: pg.url })
  try {
    const { agentToken, reviewerToken } = await issueUsersTokens(configPath)
    const tokens = { agentToken, reviewerToken }

    // 1. two instances; the lease holder is killed; the other takes over
    const a = await serve()
    const b = await serve()
    const takeover = await runPhase({ upstream, store, writeTimes, tokens, options }, { action: { type: 'set_role', role: 'viewer' }, key: 'two-instances-takeover' }, a.base, [a, b], async (survivor) => {
      assert.ok(survivor, 'the other instance still runs')
      return survivor
    })

    // 2. the survivor stops; a fresh instance is killed mid-operation and restarted
    for (const child of [a.child, b.child]) await stopServe(child, 'SIGTERM')
    const fresh = await serve()
    const restart = await runPhase({ upstream, store, writeTimes, tokens, options }, { action: { type: 'set_role', role: 'editor' }, key: 'two-instances-restart' }, fresh.base, [fresh], () => serve())
    return { takeover, restart }
  } finally {
    for (const child of children) await stopServe(child, 'SIGTERM')
    await store.close()
    await upstream.close()
    await pg.drop()
    await dir.drop()
  }
}

interface PhaseContext {
  readonly upstream: UsersUpstream
  readonly store: Store
  readonly writeTimes: number[]
  readonly tokens: { agentToken: string; reviewerToken: string }
  readonly options: TwoInstanceOptions
}

type Instance = { child: ChildProcess; base: string }

/**
 * Commits `phase` through `commitOn`, kills whichever of `running` holds the operation's lease once a quarter of
 * the targets are written, then lets `after` (given the instance left running, if any) finish it.
 */
async function runPhase(ctx: PhaseContext, phase: Phase, commitOn: string, running: readonly Instance[], after: (survivor: Instance | null) => Promise<Instance>): Promise<PhaseReport> {
  const { upstream, store, writeTimes, tokens, options } = ctx
  const writesBefore = new Map(upstream.writes)
  const logBefore = upstream.totalWrites()
  const agent = caller(commitOn, tokens.agentToken)
  const { selection } = await selectProposeApprove(agent, [caller(commitOn, tokens.reviewerToken)], 'users', { filter: { status: 'active' } }, phase.action)
  assert.equal(selection.count, options.targets)
  const commit = await agent('POST', '/v1/resources/users/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action: phase.action }, { 'idempotency-key': phase.key })
  assert.equal(commit.status, 202, JSON.stringify(commit.body))
  const operationId: string = commit.body.operation_id

  while (upstream.totalWrites() - logBefore < options.targets / 4) await new Promise((r) => setTimeout(r, 5))
  const lease = await store.db.selectFrom('operations').select(['lease_owner', 'lease_expires_at']).where('id', '=', operationId).executeTakeFirstOrThrow()
  const holderPid = Number(lease.lease_owner?.split(':')[1])
  const holder = running.find((r) => r.child.pid === holderPid)
  assert.ok(holder, `the lease is held by a running instance (owner ${lease.lease_owner}; pids ${running.map((r) => r.child.pid).join(', ')})`)
  await stopServe(holder.child, 'SIGKILL')
  const killedAt = Date.now()
  await new Promise((r) => setTimeout(r, 150)) // the upstream finishes the writes it had received
  const written = upstream.totalWrites()

  // the dead holder's lease as it was left (renewed after the read above, perhaps); if the other instance took
  // it over within these 150 ms, the expiry read before the kill is the earliest it could have been
  const leaseAtKill = await store.db.selectFrom('operations').select(['lease_owner', 'lease_expires_at']).where('id', '=', operationId).executeTakeFirstOrThrow()
  const leaseEnds = Date.parse((leaseAtKill.lease_owner === lease.lease_owner ? leaseAtKill : lease).lease_expires_at!)
  const atKill = await store.db.selectFrom('operation_targets').select(['record_id', 'state']).where('operation_id', '=', operationId).execute()
  const inFlightAtKill = new Set(atKill.filter((t) => t.state === 'in_flight').map((t) => t.record_id))
  assert.ok(atKill.some((t) => t.state === 'pending'), 'the kill came mid-operation')

  const survivor = running.find((r) => r !== holder) ?? null
  const finisher = await after(survivor)
  const agentThere = caller(finisher.base, tokens.agentToken)
  const operation = await waitForOperation(agentThere, operationId, 180_000)
  const finishedAt = Date.now()
  const resumedAt = writeTimes[written]
  assert.ok(resumedAt !== undefined, 'the operation went on after the kill')
  assert.ok(resumedAt < leaseEnds, `the next write came ${resumedAt - leaseEnds} ms after the dead instance's lease expired: the takeover waited for it`)

  // in this phase: each record written at most once, and every target in flight at the kill is unknown, not re-sent
  const phaseWrites = [...upstream.writes].map(([id, n]) => [id, n - (writesBefore.get(id) ?? 0)] as const).filter(([, n]) => n > 0)
  for (const [id, n] of phaseWrites) assert.equal(n, 1, `${id} was written ${n} times`)
  assert.deepEqual(operation.counts, { pending: 0, in_flight: 0, succeeded: options.targets - inFlightAtKill.size, failed: 0, skipped: 0, unknown: inFlightAtKill.size })
  const unknown = await allResults(agentThere, operationId, 'unknown')
  assert.deepEqual(new Set(unknown.map((r) => r.id)), inFlightAtKill)

  // the ledger agrees with the upstream once the unknown ones are re-read
  const role = phase.action.role
  const reconciled = await agentThere('POST', `/v1/operations/${operationId}/reconcile`)
  assert.equal(reconciled.status, 200, JSON.stringify(reconciled.body))
  const applied = [...upstream.users.values()].filter((u) => u.role === role).length
  assert.equal(applied, phaseWrites.length, 'every PATCH the upstream received was applied')
  assert.equal(reconciled.body.operation.counts.succeeded, applied, 'the ledger says exactly what the upstream holds')
  assert.equal(upstream.totalWrites() - logBefore, phaseWrites.length, 'reconciliation wrote nothing')

  const afterTakeover = writeTimes.slice(written).filter((t) => t !== undefined).length
  return {
    operation_id: operationId,
    in_flight_at_kill: inFlightAtKill.size,
    takeover_ms: resumedAt - killedAt,
    lease_left_ms: leaseEnds - resumedAt,
    succeeded: reconciled.body.operation.counts.succeeded,
    unknown: inFlightAtKill.size,
    writes_applied: applied,
    max_writes_per_record: Math.max(...phaseWrites.map(([, n]) => n)),
    targets_per_second_after_takeover: afterTakeover / Math.max(0.001, (finishedAt - resumedAt) / 1000),
  }
}


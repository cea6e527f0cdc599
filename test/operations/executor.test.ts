import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import BetterSqlite3 from 'better-sqlite3'
import pg from 'pg'
import { STORE_KINDS } from '../support/stores.js'
import { AGENT, OUTSIDER, createHarness, type Harness, type HarnessOptions } from './support/harness.js'

/** The committed state of a target, read over a connection of its own. */
async function committedTargetState(kind: (typeof STORE_KINDS)[number], url: string): Promise<((recordId: string) => Promise<string | undefined>) & { close(): Promise<void> }> {
  if (kind === 'sqlite') {
    const db = new BetterSqlite3(url.replace(/^sqlite:/, ''), { readonly: true })
    const statement = db.prepare('select state from operation_targets where record_id = ?')
    return Object.assign(async (id: string) => (statement.get(id) as { state: string } | undefined)?.state, { close: async () => void db.close() })
  }
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  return Object.assign(async (id: string) => (await client.query('select state from operation_targets where record_id = $1', [id])).rows[0]?.state as string | undefined, {
    close: () => client.end(),
  })
}

async function withHarness(kind: (typeof STORE_KINDS)[number], options: HarnessOptions, body: (h: Harness) => Promise<void>): Promise<void> {
  const h = await createHarness(kind, options)
  try {
    await body(h)
  } finally {
    await h.close()
  }
}

async function allResults(h: Harness, operationId: string) {
  const out = []
  let cursor: string | undefined
  do {
    const page = await h.operations.results(AGENT, operationId, { limit: 1000, ...(cursor ? { cursor } : {}) })
    out.push(...page.results)
    cursor = page.next_cursor ?? undefined
  } while (cursor)
  return out
}

const written = (h: Harness) => [...h.upstream.applied.values()].reduce((a, b) => a + b, 0)

for (const kind of STORE_KINDS) {
  describe(`executor (${kind} store)`, () => {
    test('every target is written once, in member order, with before and after recorded', () =>
      withHarness(kind, { count: 30, execution: { concurrency: 1, batch_size: 7 } }, async (h) => {
        const receipt = await h.operations.commitPlan(AGENT, h.plan.plan_id, { expectedDigest: h.plan.plan_digest, idempotencyKey: 'k-happy' })
        assert.equal(receipt.created, true)
        assert.equal(receipt.target_count, 30)
        assert.equal(receipt.results_url, `/v1/operations/${receipt.operation_id}/results`)
        const view = await h.operations.waitFor(receipt.operation_id, 10_000)
        assert.equal(view.state, 'succeeded')
        assert.deepEqual(view.counts, { pending: 0, in_flight: 0, succeeded: 30, failed: 0, skipped: 0, unknown: 0 })
        assert.deepEqual(h.upstream.order, h.ids, 'member order')
        assert.ok([...h.upstream.applied.values()].every((n) => n === 1))
        const results = await allResults(h, receipt.operation_id)
        assert.deepEqual(results[0]!.before, { role: 'member' })
        assert.deepEqual(results[0]!.after, { role: 'viewer' })
        assert.ok(results.every((r) => r.outcome === 'succeeded' && r.attempts === 1))
        assert.ok(!JSON.stringify(results).includes('s3cret'), 'denied fields never reach the ledger')
        const row = await h.store.db.selectFrom('operation_targets').select('after_version').where('operation_id', '=', receipt.operation_id).where('ord', '=', 0).executeTakeFirstOrThrow()
        assert.equal(row.after_version, '2')
        assert.equal((await h.store.db.selectFrom('plans').select('state').where('id', '=', h.plan.plan_id).executeTakeFirstOrThrow()).state, 'committed')
      }))

    test('idempotency: same key and body → same operation, even concurrently; other body → 422; no key → 400; another key → 409', () =>
      withHarness(kind, { count: 5 }, async (h) => {
        const receipts = await Promise.all(Array.from({ length: 6 }, () => h.operations.commitPlan(AGENT, h.plan.plan_id, { expectedDigest: h.plan.plan_digest, idempotencyKey: 'k-same' })))
        assert.equal(new Set(receipts.map((r) => r.operation_id)).size, 1)
        assert.equal(receipts.filter((r) => r.created).length, 1)
        const count = await h.store.db.selectFrom('operations').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
        assert.equal(Number(count.n), 1)
        await assert.rejects(h.operations.commitPlan(AGENT, h.plan.plan_id, { expectedDigest: h.selection.digest, idempotencyKey: 'k-same' }), { code: 'idempotency_key_reused' })
        await assert.rejects(h.operations.commitPlan(AGENT, h.plan.plan_id, { expectedDigest: h.plan.plan_digest }), { code: 'idempotency_key_missing' })
        for (const expectedDigest of [undefined, null, '', ' '])
          await assert.rejects(h.operations.commitPlan(AGENT, h.plan.plan_id, { idempotencyKey: 'k-no-digest', expectedDigest }), (e: any) => e.code === 'invalid_request' && e.details?.field === 'expected_digest' && /expected_digest/.test(e.message))
        await assert.rejects(h.operations.commitPlan(AGENT, h.plan.plan_id, { expectedDigest: h.plan.plan_digest, idempotencyKey: '  ' }), { code: 'idempotency_key_missing' })
        await assert.rejects(h.operations.commitPlan(AGENT, h.plan.plan_id, { expectedDigest: h.plan.plan_digest, idempotencyKey: 'k-other' }), { code: 'conflict' })
        await h.operations.waitFor(receipts[0]!.operation_id, 10_000)
        assert.ok([...h.upstream.applied.values()].every((n) => n === 1))
        const again = await h.operations.commitPlan(AGENT, h.plan.plan_id, { expectedDigest: h.plan.plan_digest, idempotencyKey: 'k-same' })
        assert.equal(again.operation_id, receipts[0]!.operation_id)
        assert.equal(again.status, 'succeeded')
      }))

    test('the bulk-actions form commits the plan for that selection and action; a wrong digest is a 409, an unplanned action a 403', () =>
      withHarness(kind, { count: 4 }, async (h) => {
        const body = { selection_id: h.selection.selection_id, expected_digest: h.selection.digest, action: { type: 'set_role', role: 'viewer' } }
        await assert.rejects(h.operations.commitBulkAction(AGENT, 'users', { idempotencyKey: 'b1', body: { ...body, expected_digest: 'sha256:nope' } }), { code: 'digest_mismatch' })
        await assert.rejects(h.operations.commitBulkAction(AGENT, 'users', { idempotencyKey: 'b2', body: { ...body, action: { type: 'set_role', role: 'admin' } } }), { code: 'not_approved' })
        await assert.rejects(h.operations.commitBulkAction(AGENT, 'users', { idempotencyKey: 'b3', body: { selection_id: h.selection.selection_id, action: { type: 'set_role' } } }), { code: 'invalid_request' })
        await assert.rejects(h.operations.commitBulkAction(OUTSIDER, 'users', { idempotencyKey: 'b4', body }), { code: 'forbidden' })
        const flat = await h.operations.commitBulkAction(AGENT, 'users', { idempotencyKey: 'b5', body })
        const nested = await h.operations.commitBulkAction(AGENT, 'users', { idempotencyKey: 'b5', body: { ...body, action: { type: 'set_role', params: { role: 'viewer' } } } })
        assert.equal(nested.operation_id, flat.operation_id, 'the flat and nested action forms are the same canonical request')
        assert.equal((await h.operations.waitFor(flat.operation_id, 10_000)).state, 'succeeded')
        await assert.rejects(h.operations.get(OUTSIDER, flat.operation_id), { code: 'forbidden' })
      }))

    test('records changed since the selection are skipped, never written', () =>
      withHarness(kind, { count: 10, execution: { concurrency: 3 } }, async (h) => {
        h.upstream.update('u0002', { role: 'owner' }) // version moved
        h.upstream.rows.get('u0005')!.fields.status = 'suspended' // precondition no longer holds, same version
        h.upstream.rows.delete('u0007')
        const receipt = await h.operations.commitPlan(AGENT, h.plan.plan_id, { expectedDigest: h.plan.plan_digest, idempotencyKey: 'k-stale' })
        const view = await h.operations.waitFor(receipt.operation_id, 10_000)
        assert.equal(view.state, 'completed_with_skips', 'no target failed: skips are named as such')
        assert.deepEqual(view.counts, { pending: 0, in_flight: 0, succeeded: 7, failed: 0, skipped: 3, unknown: 0 })
        const skipped = (await h.operations.results(AGENT, receipt.operation_id, { outcome: 'skipped' })).results
        assert.deepEqual(skipped.map((r) => [r.id, r.reason]), [['u0002', 'version_changed'], ['u0005', 'precondition_failed'], ['u0007', 'missing']])
        for (const id of ['u0002', 'u0005', 'u0007']) assert.equal(h.upstream.calls.get(id), undefined, `${id} was not written`)
        assert.equal(h.upstream.rows.get('u0002')!.fields.role, 'owner')
      }))

    test('a response contradicting the approved effect halts at that target; later targets stay pending', () =>
      withHarness(kind, { count: 40, execution: { concurrency: 1, batch_size: 8 } }, async (h) => {
        let writes = 0
        h.upstream.behaviour = () => (++writes > 10 ? 'contradict' : 'success')
        const receipt = await h.operations.commitPlan(AGENT, h.plan.plan_id, { expectedDigest: h.plan.plan_digest, idempotencyKey: 'k-contradict' })
        const view = await h.operations.waitFor(receipt.operation_id, 10_000)
        assert.equal(view.state, 'halted')
        assert.equal(view.halt_reason?.rule, 'effect_contradicted')
        assert.equal(view.halt_reason?.target_id, 'u0010')
        assert.match(view.halt_reason!.message, /"role" is "admin" where "viewer" was approved/)
        assert.deepEqual(view.counts, { pending: 29, in_flight: 0, succeeded: 10, failed: 1, skipped: 0, unknown: 0 })
        assert.equal(writes, 11)
        const failed = (await h.operations.results(AGENT, receipt.operation_id, { outcome: 'failed' })).results
        assert.equal(failed[0]!.reason, 'effect_contradicted')
        const pending = (await h.operations.results(AGENT, receipt.operation_id, { outcome: 'pending', limit: 1000 })).results
        assert.deepEqual(pending.map((r) => r.ord), Array.from({ length: 29 }, (_, i) => i + 11))
      }))

    test('an answer without the record is checked by re-reading it: the effect holds, or the operation halts', () =>
      withHarness(kind, { count: 8, execution: { concurrency: 1 } }, async (h) => {
        h.upstream.behaviour = (id) => (id === 'u0005' ? 'empty_contradict' : 'empty')
        const receipt = await h.operations.commitPlan(AGENT, h.plan.plan_id, { expectedDigest: h.plan.plan_digest, idempotencyKey: 'k-204' })
        const view = await h.operations.waitFor(receipt.operation_id, 10_000)
        assert.equal(view.halt_reason?.rule, 'effect_contradicted')
        assert.equal(view.halt_reason?.target_id, 'u0005')
        assert.deepEqual([view.counts.succeeded, view.counts.failed, view.counts.pending], [5, 1, 2])
        const first = (await h.operations.results(AGENT, receipt.operation_id, { limit: 1 })).results[0]!
        // the model connector is a sql one: its 204 is its own classification, never recorded as an upstream's answer
        assert.deepEqual([first.upstream_status, first.after], [null, { role: 'viewer' }])
      }))

    test('closing mid-operation records what is in flight and hands the operation over; nothing is written twice', () =>
      withHarness(kind, { count: 30, execution: { concurrency: 2 } }, async (h) => {
        h.upstream.writeDelayMs = 15
        const receipt = await h.operations.commitPlan(AGENT, h.plan.plan_id, { expectedDigest: h.plan.plan_digest, idempotencyKey: 'k-close' })
        while (written(h) < 6) await new Promise((r) => setTimeout(r, 2))
        await h.operations.close()
        const row = await h.store.db.selectFrom('operations').select(['state', 'lease_owner']).where('id', '=', receipt.operation_id).executeTakeFirstOrThrow()
        assert.deepEqual(row, { state: 'running', lease_owner: null })
        const paused = await h.instance({ executors: false }).get(AGENT, receipt.operation_id)
        assert.equal(paused.counts.in_flight, 0)
        assert.ok(paused.counts.pending > 0)
        const next = h.instance({ instanceId: 'next' })
        await next.recover()
        const view = await next.waitFor(receipt.operation_id, 10_000)
        assert.deepEqual([view.state, view.counts.succeeded], ['succeeded', 30])
        assert.ok([...h.upstream.calls.values()].every((n) => n === 1))
      }))

    test('an authorization failure halts at once', () =>
      withHarness(kind, { count: 10, execution: { concurrency: 1 } }, async (h) => {
        h.upstream.behaviour = (id) => (id === 'u0003' ? 'unauthorized' : 'success')
        const receipt = await h.operations.commitPlan(AGENT, h.plan.plan_id, { expectedDigest: h.plan.plan_digest, idempotencyKey: 'k-auth' })
        const view = await h.operations.waitFor(receipt.operation_id, 10_000)
        assert.equal(view.halt_reason?.rule, 'authorization_failure')
        assert.deepEqual([view.counts.succeeded, view.counts.failed, view.counts.pending], [3, 1, 6])
      }))

    test('N consecutive upstream errors halt; isolated validation failures halt past their threshold', async () => {
      await withHarness(kind, { count: 20, execution: { concurrency: 1, halt_after_consecutive_errors: 3 } }, async (h) => {
        h.upstream.behaviour = (id) => (id >= 'u0004' ? 'unknown' : 'success')
        const receipt = await h.operations.commitPlan(AGENT, h.plan.plan_id, { expectedDigest: h.plan.plan_digest, idempotencyKey: 'k-streak' })
        const view = await h.operations.waitFor(receipt.operation_id, 10_000)
        assert.equal(view.halt_reason?.rule, 'consecutive_errors')
        assert.equal(view.halt_reason?.target_id, 'u0006')
        assert.deepEqual([view.counts.succeeded, view.counts.unknown, view.counts.pending], [4, 3, 13])
      })
      await withHarness(kind, { count: 20, execution: { concurrency: 1, halt_after_consecutive_errors: 2, halt_after_validation_failures: 3 } }, async (h) => {
        h.upstream.behaviour = (id) => (Number(id.slice(1)) % 3 === 1 ? 'rejected' : 'success')
        const receipt = await h.operations.commitPlan(AGENT, h.plan.plan_id, { expectedDigest: h.plan.plan_digest, idempotencyKey: 'k-valid' })
        const view = await h.operations.waitFor(receipt.operation_id, 10_000)
        assert.equal(view.halt_reason?.rule, 'validation_failures')
        assert.equal(view.halt_reason?.target_id, 'u0007')
        assert.deepEqual([view.counts.succeeded, view.counts.failed, view.counts.pending], [5, 3, 12])
      })
    })

    test('a 429 pauses the operation for Retry-After, then the same target is retried; max writes per second holds', async () => {
      // The executor's clock and its pacer's waits are virtual: time passes only when the pacer waits, so what
      // is asserted is the pacing itself, not how long a busy machine took.
      const start = Date.parse('2030-01-01T00:00:00.000Z')
      let virtual = start
      const clock = () => new Date(virtual)
      const wait = async (ms: number) => {
        virtual += ms
        await new Promise((resolve) => setImmediate(resolve))
      }
      await withHarness(kind, { count: 12, clock, execution: { concurrency: 2, max_writes_per_second: 25 }, service: { wait } }, async (h) => {
        const calls: { id: string; call: number; at: number }[] = []
        h.upstream.retryAfterSeconds = 1
        h.upstream.behaviour = (id, call) => {
          calls.push({ id, call, at: virtual })
          return id === 'u0001' && call === 1 ? 'rate_limited' : 'success'
        }
        const receipt = await h.operations.commitPlan(AGENT, h.plan.plan_id, { expectedDigest: h.plan.plan_digest, idempotencyKey: 'k-429' })
        const view = await h.operations.waitFor(receipt.operation_id, 60_000)
        assert.equal(view.state, 'succeeded')
        const first = (await h.operations.results(AGENT, receipt.operation_id, { limit: 2 })).results[1]!
        assert.equal(first.id, 'u0001')
        assert.equal(first.attempts, 2)
        assert.equal(h.upstream.applied.get('u0001'), 1)
        assert.equal(written(h), 12)

        // 25 a second: the k-th write call (in time order) starts no earlier than k × 40 ms after the first slot.
        const times = calls.map((c) => c.at).sort((a, b) => a - b)
        assert.equal(times.length, 13, '12 writes and the one answered 429')
        times.forEach((at, k) => assert.ok(at >= start + k * 40, `write call ${k} at +${at - start} ms, before +${k * 40} ms`))
        // Retry-After: 1 second between the 429 and the retry, and no other write in between.
        const limited = calls.find((c) => c.id === 'u0001' && c.call === 1)!
        const retry = calls.find((c) => c.id === 'u0001' && c.call === 2)!
        assert.ok(retry.at >= limited.at + 1000, `retried ${retry.at - limited.at} ms after the 429`)
        assert.deepEqual(calls.filter((c) => c.at > limited.at && c.at < limited.at + 1000), [], 'the whole operation paused')
      })
    })

    test('without a snapshot, a batch whose membership changed halts before any of its writes', async () => {
      const cases: [string, (h: Harness) => void, RegExp][] = [
        ['removed', (h) => h.upstream.rows.delete('u0007'), /u0007" no longer exists/],
        ['version', (h) => h.upstream.update('u0006', { role: 'member' }), /u0006" is at version 2/],
        ['excluded', (h) => (h.upstream.rows.get('u0008')!.fields.role = 'suspended'), /exclusion rule "suspended"/],
        ['filter', (h) => (h.upstream.rows.get('u0009')!.fields.status = 'inactive'), /no longer matches the selection's filter/],
      ]
      for (const [name, change, message] of cases)
        await withHarness(kind, { count: 15, consistentSnapshot: false, execution: { concurrency: 2, batch_size: 5 } }, async (h) => {
          let batchChecks = 0
          h.upstream.onRead = (ids) => {
            if (ids.length > 1 && ++batchChecks === 2) change(h)
          }
          const receipt = await h.operations.commitPlan(AGENT, h.plan.plan_id, { expectedDigest: h.plan.plan_digest, idempotencyKey: `k-member-${name}` })
          const view = await h.operations.waitFor(receipt.operation_id, 10_000)
          assert.equal(view.state, 'halted', name)
          assert.equal(view.halt_reason?.rule, 'membership_changed')
          assert.match(view.halt_reason!.message, message)
          assert.equal(view.stop_rules?.revalidate_membership_per_batch, true)
          assert.deepEqual([view.counts.succeeded, view.counts.pending], [5, 10])
          assert.equal(written(h), 5, 'nothing of the changed batch was written')
        })
    })

    test('targets are put in flight a window at a time, before any write of the window, at most two windows ahead', () =>
      withHarness(kind, { count: 24, execution: { concurrency: 4 } }, async (h) => {
        h.upstream.writeDelayMs = 300
        const receipt = await h.operations.commitPlan(AGENT, h.plan.plan_id, { expectedDigest: h.plan.plan_digest, idempotencyKey: 'k-window' })
        while (written(h) + h.upstream.calls.size === 0) await new Promise((r) => setTimeout(r, 2))
        // the first writes are held 300 ms by the upstream: what the ledger shows now is what a crash would leave
        const rows = await h.store.db.selectFrom('operation_targets').select(['record_id', 'state', 'ord']).where('operation_id', '=', receipt.operation_id).execute()
        const inFlight = rows.filter((r) => r.state === 'in_flight')
        for (const id of h.upstream.calls.keys()) assert.equal(rows.find((r) => r.record_id === id)?.state, 'in_flight', `${id} was sent before it was in flight`)
        assert.ok(inFlight.length >= 4, `a whole window is claimed at once (${inFlight.length} in flight)`)
        assert.ok(inFlight.length <= 8, `claimed at most two windows ahead (${inFlight.length} in flight)`)
        assert.deepEqual(inFlight.map((r) => r.ord).sort((a, b) => a - b), Array.from({ length: inFlight.length }, (_, i) => i), 'claimed in member order')
        const view = await h.operations.waitFor(receipt.operation_id, 20_000)
        assert.deepEqual([view.state, view.counts.succeeded], ['succeeded', 24])
        assert.ok([...h.upstream.calls.values()].every((n) => n === 1))
      }))

    test('every write arrives after its target\'s in_flight is committed, as another connection sees the store', () =>
      withHarness(kind, { count: 40, execution: { concurrency: 4 } }, async (h) => {
        // A second connection sees only what is committed: what a crash at the moment of the write would leave.
        const committedState = await committedTargetState(kind, h.storeUrl)
        const early: string[] = []
        h.upstream.writeDelayMs = 15 // workers stay busy while the next windows are claimed
        h.upstream.onWrite = async (id) => {
          const state = await committedState(id)
          if (state !== 'in_flight') early.push(`${id}: ${state}`)
        }
        try {
          const receipt = await h.operations.commitPlan(AGENT, h.plan.plan_id, { expectedDigest: h.plan.plan_digest, idempotencyKey: 'k-durable' })
          const view = await h.operations.waitFor(receipt.operation_id, 30_000)
          assert.deepEqual([view.state, view.counts.succeeded], ['succeeded', 40])
          assert.deepEqual(early, [], 'writes sent before their in_flight record was committed')
        } finally {
          await committedState.close()
        }
      }))

    test('a target the store no longer holds pending when its window is claimed (another instance, a cancel) is never written', () =>
      withHarness(kind, { count: 24, execution: { concurrency: 4 } }, async (h) => {
        // The executor has read the pending targets into memory before the first write; while that write is
        // held, the store moves four later ones out of pending. The claim's conditional update refuses them.
        const taken = [12, 13, 14, 15]
        let moved = false
        h.upstream.writeDelayMs = 10
        h.upstream.onWrite = async () => {
          if (moved) return
          moved = true
          await h.store.db.updateTable('operation_targets').set({ state: 'skipped', reason: 'taken elsewhere' }).where('ord', 'in', taken).execute()
        }
        const receipt = await h.operations.commitPlan(AGENT, h.plan.plan_id, { expectedDigest: h.plan.plan_digest, idempotencyKey: 'k-taken' })
        const view = await h.operations.waitFor(receipt.operation_id, 30_000)
        for (const ord of taken) assert.equal(h.upstream.calls.get(h.ids[ord]!), undefined, `${h.ids[ord]} was written though the store no longer held it pending`)
        assert.deepEqual([view.counts.succeeded, view.counts.skipped], [20, 4])
      }))

    test('recovery: in-flight targets become unknown and are never re-sent; pending ones resume', () =>
      withHarness(kind, { count: 12, service: { executors: false } }, async (h) => {
        const receipt = await h.operations.commitPlan(AGENT, h.plan.plan_id, { expectedDigest: h.plan.plan_digest, idempotencyKey: 'k-crash' })
        const past = new Date(Date.now() - 60_000).toISOString()
        await h.store.db.updateTable('operations').set({ state: 'running', lease_owner: 'dead-instance', lease_expires_at: past }).where('id', '=', receipt.operation_id).execute()
        await h.store.db.updateTable('operation_targets').set({ state: 'succeeded' }).where('operation_id', '=', receipt.operation_id).where('ord', '<', 3).execute()
        await h.store.db.updateTable('operation_targets').set({ state: 'in_flight' }).where('operation_id', '=', receipt.operation_id).where('ord', 'in', [3, 4]).execute()
        const survivor = h.instance({ executors: true, instanceId: 'survivor' })
        await survivor.recover()
        const view = await survivor.waitFor(receipt.operation_id, 10_000)
        assert.equal(view.state, 'completed_with_unknown')
        assert.deepEqual([view.counts.succeeded, view.counts.unknown], [10, 2])
        const unknown = (await survivor.results(AGENT, receipt.operation_id, { outcome: 'unknown' })).results
        assert.deepEqual(unknown.map((r) => [r.id, r.reason]), [['u0003', 'interrupted: no durable answer'], ['u0004', 'interrupted: no durable answer']])
        for (const id of ['u0000', 'u0001', 'u0002', 'u0003', 'u0004']) assert.equal(h.upstream.calls.get(id), undefined, `${id} not re-sent`)
      }))

    test('a live lease of another instance is not stolen; an expired one is claimed', () => {
      // The other instance's lease ends a minute from now; the test then ends it in the store (as its end passing
      // would) rather than racing a sub-second lease against a sleep. Not by moving the services' clock: on
      // PostgreSQL leases are judged on the database's clock, and an instance whose clock alone has moved a minute
      // on must not take a live lease (test/operations/lease-clock-skew.test.ts).
      return withHarness(kind, { count: 6, execution: { lease_seconds: 0.5 }, service: { executors: false } }, async (h) => {
        const receipt = await h.operations.commitPlan(AGENT, h.plan.plan_id, { expectedDigest: h.plan.plan_digest, idempotencyKey: 'k-lease' })
        const lease = (at: number) => h.store.db.updateTable('operations').set({ state: 'running', lease_owner: 'other', lease_expires_at: new Date(at).toISOString() }).where('id', '=', receipt.operation_id).execute()
        await lease(Date.now() + 60_000)
        const b = h.instance({ executors: true, instanceId: 'b' })
        await b.recover()
        // b's sweeper looks for claimable operations every 250 ms of real time: give it a few looks
        await new Promise((r) => setTimeout(r, 800))
        assert.equal(written(h), 0, 'the live lease was respected')
        await lease(Date.now() - 1_000)
        const view = await b.waitFor(receipt.operation_id, 10_000)
        assert.equal(view.state, 'succeeded')
        assert.equal(written(h), 6)
      })
    })

    test('two instances recovering at once execute every target once', () =>
      withHarness(kind, { count: 40, service: { executors: false } }, async (h) => {
        h.upstream.writeDelayMs = 2
        const receipt = await h.operations.commitPlan(AGENT, h.plan.plan_id, { expectedDigest: h.plan.plan_digest, idempotencyKey: 'k-race' })
        const a = h.instance({ executors: true, instanceId: 'a' })
        const b = h.instance({ executors: true, instanceId: 'b' })
        await Promise.all([a.recover(), b.recover()])
        const view = await a.waitFor(receipt.operation_id, 10_000)
        assert.equal(view.state, 'succeeded')
        assert.ok([...h.upstream.calls.values()].every((n) => n === 1))
        assert.equal(written(h), 40)
      }))

    // No settle window here (reconcile_settle_seconds: 0): the model upstream answers or drops a write at once.
    // test/operations/reconcile-settle.test.ts covers the window against an upstream that holds a write.
    test('reconcile: an unknown target holding the approved effect succeeds; one still at its version failed', () =>
      withHarness(kind, { count: 6, execution: { concurrency: 1, halt_after_consecutive_errors: 10, reconcile_settle_seconds: 0 } }, async (h) => {
        h.upstream.behaviour = (id) => (id === 'u0001' ? 'unknown_applied' : id === 'u0002' ? 'unknown' : 'success')
        const receipt = await h.operations.commitPlan(AGENT, h.plan.plan_id, { expectedDigest: h.plan.plan_digest, idempotencyKey: 'k-rec' })
        const view = await h.operations.waitFor(receipt.operation_id, 10_000)
        assert.deepEqual([view.state, view.counts.unknown], ['completed_with_unknown', 2])
        const report = await h.operations.reconcile(AGENT, receipt.operation_id)
        assert.deepEqual([report.examined, report.succeeded, report.failed, report.still_unknown], [2, 1, 1, 0])
        assert.deepEqual(report.operation.counts, { pending: 0, in_flight: 0, succeeded: 5, failed: 1, skipped: 0, unknown: 0 })
        assert.equal(report.operation.state, 'partially_failed', 'once reconciled, the state follows what the ledger now holds')
        const failed = (await h.operations.results(AGENT, receipt.operation_id, { outcome: 'failed' })).results
        assert.deepEqual(failed.map((r) => [r.id, r.reason]), [['u0002', 'not_applied']])
        assert.equal(h.upstream.calls.get('u0002'), 1, 'reconciliation never writes')
      }))

    test('compensation sends each succeeded target with its before, after, written version and source', () =>
      withHarness(kind, { count: 5, execution: { concurrency: 1 } }, async (h) => {
        h.upstream.behaviour = (id) => (id === 'u0004' ? 'rejected' : 'success')
        const receipt = await h.operations.commitPlan(AGENT, h.plan.plan_id, { expectedDigest: h.plan.plan_digest, idempotencyKey: 'k-comp' })
        await h.operations.waitFor(receipt.operation_id, 10_000)
        const plan = (await h.operations.proposeCompensation(AGENT, receipt.operation_id)) as { target_count: number }
        assert.equal(plan.target_count, 4)
        assert.deepEqual(h.compensations[0]!.targets[0], { id: 'u0000', source: 'model', before: { role: 'member' }, after: { role: 'viewer' }, version: '2', current: { role: 'viewer' } })
      }))

    test('results page by a signed cursor bound to the operation and the outcome filter', () =>
      withHarness(kind, { count: 23 }, async (h) => {
        const receipt = await h.operations.commitPlan(AGENT, h.plan.plan_id, { expectedDigest: h.plan.plan_digest, idempotencyKey: 'k-pages' })
        await h.operations.waitFor(receipt.operation_id, 10_000)
        const seen: number[] = []
        let cursor: string | undefined
        do {
          const page = await h.operations.results(AGENT, receipt.operation_id, { limit: 7, ...(cursor ? { cursor } : {}) })
          seen.push(...page.results.map((r) => r.ord))
          cursor = page.next_cursor ?? undefined
        } while (cursor)
        assert.deepEqual(seen, Array.from({ length: 23 }, (_, i) => i))
        const first = await h.operations.results(AGENT, receipt.operation_id, { limit: 7 })
        const tampered = `${first.next_cursor!.slice(0, -2)}xx`
        await assert.rejects(h.operations.results(AGENT, receipt.operation_id, { cursor: tampered }), { code: 'invalid_cursor' })
        await assert.rejects(h.operations.results(AGENT, receipt.operation_id, { cursor: first.next_cursor!, outcome: 'succeeded' }), { code: 'invalid_cursor' })
        await assert.rejects(h.operations.results(AGENT, receipt.operation_id, { limit: 0 }), { code: 'invalid_request' })
      }))
  })
}

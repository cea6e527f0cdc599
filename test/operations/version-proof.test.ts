import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { readVersionProof, recordVersionProof, versionProofDigest, vouches, VERSION_PROOF_MAX_AGE_MS, type VersionProof } from '../../src/operations/index.js'
import { runWarrant } from '../support/cli-config.js'
import { STORE_KINDS } from '../support/stores.js'
import { allResults, selectProposeApprove, waitForOperation } from './support/flow.js'
import { usersProof, withUsersGateway, type UsersGateway } from './support/users-gateway.js'
import { userIdOf } from './support/users-upstream.js'

/**
 * Issue 9: over HTTP the executor re-read every target alone before its write, although its batch had just been
 * read, because nothing proved that the upstream refuses a stale If-Match. `warrant check --write-probe` proves
 * it (a write with a stale version, refused) and the store keeps the result; an operation of that action then
 * trusts the batch read and the conditional write, one GET per target fewer. Any other probe result, a probe
 * of another connector or action config, or an old one, vouches for nothing.
 */

const COUNT = 40
const ROLE = { type: 'set_role', role: 'viewer' }

/** Runs set_role over every user; returns the operation, its results, and the GETs by id it cost. */
async function runOperation(ctx: UsersGateway, key: string) {
  const { selection } = await selectProposeApprove(ctx.agent, [ctx.reviewer], 'users', { filter: { status: 'active' } }, ROLE)
  assert.equal(selection.count, COUNT)
  assert.equal(selection.consistent_snapshot, false, 'the users upstream has no snapshot: batches are re-read before they are written')
  const readsBefore = ctx.upstream.readsById()
  const batchReadsBefore = ctx.upstream.batchReads()
  const writesBefore = ctx.upstream.totalWrites()
  const commit = await ctx.agent('POST', '/v1/resources/users/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action: ROLE }, { 'idempotency-key': key })
  assert.equal(commit.status, 202, JSON.stringify(commit.body))
  const operation = await waitForOperation(ctx.agent, commit.body.operation_id)
  return {
    operation,
    results: await allResults(ctx.agent, commit.body.operation_id),
    reads: ctx.upstream.readsById() - readsBefore,
    batchReads: ctx.upstream.batchReads() - batchReadsBefore,
    writes: ctx.upstream.totalWrites() - writesBefore,
  }
}

const enforcedEvents = async (ctx: UsersGateway) =>
  (await ctx.fx.gateway.store.db.selectFrom('audit_events').select(['action', 'summary']).where('action', '=', 'operation.version_enforced').execute()).length

for (const kind of STORE_KINDS) {
  describe(`a write probe lets an operation trust its batch read (${kind} store)`, () => {
    test('without a probe, every target is read with its batch and again alone before its PATCH', () =>
      withUsersGateway(kind, COUNT, { concurrency: 4, batch_size: 10 }, async (ctx) => {
        const run = await runOperation(ctx, `no-probe-${kind}`)
        assert.equal(run.operation.state, 'succeeded', JSON.stringify(run.operation))
        assert.equal(run.writes, COUNT)
        assert.equal(run.reads, 2 * COUNT)
        assert.equal(await enforcedEvents(ctx), 0)
      }))

    test('after `warrant check --write-probe` held: one GET per target (its batch), and a record changed after its batch was read is refused upstream and skipped, never overwritten', () =>
      withUsersGateway(kind, COUNT, { concurrency: 1, batch_size: 10 }, async (ctx) => {
        const check = await runWarrant(['check', 'users', '--write-probe', userIdOf(40), '--json', '--config', ctx.configFile], ctx.fx.dir)
        const report = JSON.parse(check.stdout) as { guarantees: { name: string; status: string }[] }
        assert.equal(report.guarantees.find((g) => g.name === 'write_probe.set_role')?.status, 'holds', check.stdout + check.stderr)
        const proof = await readVersionProof(ctx.fx.gateway.store.db, 'users', 'set_role', 'main')
        assert.equal(proof?.status, 'holds')
        assert.equal(proof?.record_id, userIdOf(40))

        // the first write of the operation: someone else changes a member of the same batch, already read
        let firstWrite: number | null = null
        ctx.upstream.onWrite = (_id, n) => {
          firstWrite ??= n
          if (n !== firstWrite) return
          const touched = ctx.upstream.users.get(userIdOf(7))!
          ctx.upstream.users.set(touched.id, { ...touched, name: 'Renamed meanwhile', version: touched.version + 1 })
        }
        const run = await runOperation(ctx, `probed-${kind}`)
        // and the refused one once more, alone: its 412 says only that the upstream refused, the record why (conflict-verdict.ts)
        assert.equal(run.reads, COUNT + 1, 'each target read once, with its batch, and the refused one again')
        assert.equal(run.writes, COUNT, 'one PATCH per target, the refused one included')
        assert.equal(run.operation.state, 'completed_with_skips', JSON.stringify(run.operation))
        assert.deepEqual(run.operation.counts, { pending: 0, in_flight: 0, succeeded: COUNT - 1, failed: 0, skipped: 1, unknown: 0 })
        const skipped = run.results.filter((r) => r.outcome === 'skipped')
        assert.deepEqual(skipped.map((r) => [r.id, r.upstream_status]), [[userIdOf(7), 412]])
        assert.deepEqual(ctx.upstream.users.get(userIdOf(7)), { id: userIdOf(7), name: 'Renamed meanwhile', role: 'member', status: 'active', version: 2 }, 'the change made meanwhile stands')
        assert.equal(await enforcedEvents(ctx), 1, 'the audit log says the operation relied on the probe')
      }))

    // the right batch config, and one naming a parameter the upstream ignores (it answers its first page instead)
    const batchConfigs = [
      { ids_param: 'ids', batchReads: COUNT / 10, reads: COUNT / 10, outcome: 'found' },
      { ids_param: 'user_ids', batchReads: 0, reads: COUNT, outcome: 'foreign_id' },
    ]
    for (const expected of batchConfigs)
      test(`with get.batch (${expected.ids_param}): a batch of 10 is one GET and one user read alone (the check that the answer is whole); a batch config the upstream ignores costs a GET per user, never a wrong write`, () =>
        withUsersGateway(
          kind,
          COUNT,
          { concurrency: 4, batch_size: 10 },
          async (ctx) => {
            const check = await runWarrant(['check', 'users', '--write-probe', userIdOf(40), '--json', '--config', ctx.configFile], ctx.fx.dir)
            assert.match(check.stdout, /"write_probe\.set_role"[^}]*"status": "holds"/, check.stdout + check.stderr)
            const run = await runOperation(ctx, `batched-${kind}`)
            assert.equal(run.operation.state, 'succeeded', JSON.stringify(run.operation))
            assert.equal(run.writes, COUNT)
            assert.deepEqual([run.batchReads, run.reads], [expected.batchReads, expected.reads])
            assert.deepEqual(ctx.upstream.users.get(userIdOf(1)), { id: userIdOf(1), name: 'User 1', role: 'viewer', status: 'active', version: 2 })
            // the batch reads are in the audit log as the operation's calls, each saying whether its answer was used
            const calls = await ctx.fx.gateway.store.db.selectFrom('audit_events').select('summary').where('action', '=', 'GET /users').where('operation_id', '=', run.operation.operation_id).execute()
            const outcomes = calls.map((c) => JSON.parse(c.summary as string) as { outcome: string; ids?: number }).filter((c) => c.ids !== undefined)
            assert.deepEqual(outcomes.map((c) => [c.ids, c.outcome]), Array.from({ length: COUNT / 10 }, () => [10, expected.outcome]))
          },
          { batch: { ids_param: expected.ids_param } },
        ))

    test('a probe that did not hold, of another connector or action config, or older than the limit, vouches for nothing: every target is read again alone', () =>
      withUsersGateway(kind, COUNT, { concurrency: 4, batch_size: 10 }, async (ctx) => {
        const db = ctx.fx.gateway.store.db
        const wrong: Partial<VersionProof>[] = [
          { status: 'unsafe' },
          { status: 'unknown' },
          { digest: versionProofDigest(ctx.fx.gateway.catalogue.get('users').config.connector, { ...ctx.fx.gateway.catalogue.get('users').config.actions.set_role, write: { method: 'PUT' } }) },
          { probed_at: new Date(Date.now() - VERSION_PROOF_MAX_AGE_MS - 60_000).toISOString() },
        ]
        for (const [i, overrides] of wrong.entries()) {
          await recordVersionProof(db, usersProof(ctx, overrides))
          const run = await runOperation(ctx, `wrong-proof-${kind}-${i}`)
          assert.equal(run.operation.state, 'succeeded', JSON.stringify(run.operation))
          assert.equal(run.reads, 2 * COUNT, JSON.stringify(overrides))
        }
        assert.equal(await enforcedEvents(ctx), 0)
        // and the same operation with a proof that holds reads each target once
        await recordVersionProof(db, usersProof(ctx))
        const proven = await runOperation(ctx, `right-proof-${kind}`)
        assert.equal(proven.operation.state, 'succeeded', JSON.stringify(proven.operation))
        assert.equal(proven.reads, COUNT)
      }))
  })
}

describe('vouches', () => {
  const proof: VersionProof = { resource: 'r', action: 'a', digest: 'sha256:x', status: 'holds', record_id: '1', probed_at: '2026-11-01T00:00:00.000Z', detail: '' }
  const at = Date.parse('2026-11-02T00:00:00.000Z')
  test('only a proof that held, for this digest, made in the past and within the limit', () => {
    assert.equal(vouches(proof, 'sha256:x', at), true)
    assert.equal(vouches(null, 'sha256:x', at), false)
    assert.equal(vouches({ ...proof, status: 'unsafe' }, 'sha256:x', at), false)
    assert.equal(vouches(proof, 'sha256:y', at), false)
    assert.equal(vouches(proof, 'sha256:x', Date.parse(proof.probed_at) + VERSION_PROOF_MAX_AGE_MS), false)
    assert.equal(vouches(proof, 'sha256:x', Date.parse(proof.probed_at) - 1), false, 'a proof dated in the future is not trusted')
    assert.equal(vouches({ ...proof, probed_at: 'yesterday' }, 'sha256:x', at), false)
  })
})

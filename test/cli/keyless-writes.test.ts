import assert from 'node:assert/strict'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { sql } from 'kysely'
import { parseAuditKeys, verifyAuditChain } from '../../src/audit/index.js'
import { createStore, type Store } from '../../src/store/index.js'
import { createCliWorkspace } from '../support/cli-config.js'

const K1 = `k1 ${'a1'.repeat(32)}`

/**
 * A short command that changes state (`warrant approve`, `select`, `plan`, `commit`, `token create`/`revoke`, …)
 * run from a shell without the audit key, on a store whose chain is signed, acted: the approval (or token, or
 * selection) landed, and only its own audit row was refused, a line on stderr. An approval with no audit row is what
 * the log exists to prevent. Such a command now refuses before it acts (exit 2, naming the variable), changing
 * nothing; reading commands (`audit verify`, `token list`, `principal list`, `search`) still run.
 */
describe('state-changing CLI commands on a signed chain without its key (real processes, sqlite)', () => {
  test('refuse before acting, naming the key variable; nothing changes; reads still run', { timeout: 300_000 }, async () => {
    // no audit section: the key is WARRANT_AUDIT_KEY, set in the server's environment and not in this shell
    const ws = await createCliWorkspace({ count: 60, edit: (raw) => void delete raw.audit })
    const keyed = (args: string[]) => ws.warrantWith(args, { WARRANT_AUDIT_KEY: K1 })
    const keyless = (args: string[]) => ws.warrantWith(args, { WARRANT_AUDIT_KEY: undefined })
    const withUpstream = async <T>(run: (db: Store['db']) => Promise<T>): Promise<T> => {
      const demo = await createStore({ url: `sqlite:${join(ws.dir, 'demo.db')}` })
      try {
        return await run(demo.db)
      } finally {
        await demo.close()
      }
    }
    try {
      // the server's side, with the key: a reviewer, a selection, a plan awaiting review
      const created = await keyed(['token', 'create', '--role', 'reviewer', '--name', 'rev', '--json'])
      assert.equal(created.code, 0, created.stderr)
      const reviewer = JSON.parse(created.stdout) as { token: string; token_id: string }
      const selected = await keyed(['select', 'subscriptions', '--filter', 'status=past_due', '--filter', 'collection=active', '--json', '-q'])
      assert.equal(selected.code, 0, selected.stderr)
      const selection = JSON.parse(selected.stdout) as { selection_id: string; count: number }
      assert.ok(selection.count > 0, 'the demo data has past-due subscriptions')
      const planned = await keyed(['plan', selection.selection_id, '--action', 'pause_collection', '--param', 'reason=probe', '--json'])
      assert.equal(planned.code, 0, planned.stderr)
      const plan = JSON.parse(planned.stdout) as { plan_id: string; plan_digest: string }

      const snapshot = () =>
        ws.withStore(async (store) => ({
          audit: (await store.db.selectFrom('audit_events').select('seq').execute()).length,
          selections: (await store.db.selectFrom('selections').select('id').execute()).length,
          plans: (await store.db.selectFrom('plans').select(['id', 'state']).execute()).map((p) => `${p.id}:${p.state}`).sort(),
          approvals: (await store.db.selectFrom('approvals').select('id').execute()).length,
          operations: (await store.db.selectFrom('operations').select('id').execute()).length,
          principals: (await store.db.selectFrom('principals').select(['id', 'disabled_at']).execute()).map((p) => `${p.id}:${p.disabled_at ?? ''}`).sort(),
          tokens: (await store.db.selectFrom('tokens').select(['id', 'revoked_at']).execute()).map((t) => `${t.id}:${t.revoked_at ?? ''}`).sort(),
          // the chain head, and the write probes' results (`check --write-probe` keeps them here)
          kv: (await store.db.selectFrom('kv').select(['key', 'value']).execute()).map((r) => `${r.key}=${r.value}`).sort(),
          // the upstream: a write probe sends a write to it
          upstream: await withUpstream((demo) => sql<Record<string, unknown>>`select * from subscriptions order by id`.execute(demo).then((r) => JSON.stringify(r.rows))),
        }))
      const probeId = await withUpstream(async (demo) => (await sql<{ id: string }>`select id from subscriptions order by id limit 1`.execute(demo)).rows[0]!.id)
      const before = await snapshot()

      const writes: [string, string[]][] = [
        ['approve', ['approve', plan.plan_id, '--digest', plan.plan_digest, '--token', reviewer.token]],
        ['reject', ['approve', plan.plan_id, '--digest', plan.plan_digest, '--reject', '--token', reviewer.token]],
        ['select', ['select', 'subscriptions', '-q']],
        ['plan', ['plan', selection.selection_id, '--action', 'pause_collection', '--param', 'reason=again']],
        ['commit', ['commit', plan.plan_id, '--key', 'probe-1', '--digest', plan.plan_digest]],
        ['recover', ['recover', selection.selection_id]],
        ['token create', ['token', 'create', '--role', 'agent', '--name', 'bot']],
        ['token create --principal', ['token', 'create', '--principal', 'rev']],
        ['token revoke', ['token', 'revoke', reviewer.token_id]],
        ['principal disable', ['principal', 'disable', 'rev', '--reason', 'probe']],
        ['principal enable', ['principal', 'enable', 'rev']],
        ['audit checkpoint', ['audit', 'checkpoint']],
        // it sends a write upstream and keeps its result in the store
        ['check --write-probe', ['check', 'subscriptions', '--write-probe', probeId]],
      ]
      for (const [name, args] of writes) {
        const run = await keyless(args)
        assert.equal(run.code, 2, `${name}: exit ${run.code}\n${run.stdout}\n${run.stderr}`)
        assert.equal(run.stdout, '', `${name}: no answer printed`)
        assert.match(run.stderr, new RegExp(`signed with audit key "k1".*no audit key is configured: set WARRANT_AUDIT_KEY`), `${name}: ${run.stderr}`)
        assert.doesNotMatch(run.stderr, /internal error/, name)
      }
      assert.deepEqual(await snapshot(), before, 'nothing changed: no approval, selection, plan, operation, principal, token or audit row')

      // reading commands still run
      const list = await keyless(['token', 'list'])
      assert.equal(list.code, 0, list.stderr)
      assert.match(list.stdout, /principal=rev/)
      const principals = await keyless(['principal', 'list'])
      assert.equal(principals.code, 0, principals.stderr)
      assert.match(principals.stdout, /^rev +reviewer +prn_\S+ +enabled$/m)
      const search = await keyless(['search', 'subscriptions', '--filter', 'status=past_due'])
      assert.equal(search.code, 0, search.stderr)
      // `check` without a write probe only reads: it runs (exit 0 all hold, 4 could not tell, 5 failing closed)
      const check = await keyless(['check', 'subscriptions'])
      assert.ok([0, 4, 5].includes(check.code), `check: exit ${check.code}\n${check.stdout}\n${check.stderr}`)
      assert.match(check.stdout, /check subscriptions/, check.stderr)
      // with the key, the write probe runs and keeps its result
      const probed = await keyed(['check', 'subscriptions', '--write-probe', probeId])
      assert.ok([0, 4, 5].includes(probed.code), `check --write-probe with the key: exit ${probed.code}\n${probed.stdout}\n${probed.stderr}`)
      assert.ok((await ws.withStore((store) => store.db.selectFrom('kv').select('key').execute())).some((r) => r.key.startsWith('version_proof:["subscriptions",')), 'its result is kept, per source')
      const verify = await keyless(['audit', 'verify'])
      assert.equal(verify.code, 3, verify.stderr)
      assert.match(verify.stdout, /unverifiable/)

      const chain = await ws.withStore((store) => verifyAuditChain(store.db, { keyring: parseAuditKeys(K1, 'test') }))
      assert.ok(chain.ok && chain.guarantee === 'signed', JSON.stringify(chain))
    } finally {
      await ws.drop()
    }
  })
})

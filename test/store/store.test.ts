import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { sql } from 'kysely'
import type { Kysely } from 'kysely'
import pg from 'pg'
import {
  InvalidStoreUrlError,
  createStore,
  inSlices,
  migrateToLatest,
  parseStoreUrl,
  storeMigrations,
} from '../../src/store/index.js'
import type { Database, Store } from '../../src/store/index.js'
import { STORE_KINDS, TEST_POSTGRES_ADMIN_URL, createTempDir, createTestStore } from '../support/stores.js'
import type { StoreKind } from '../support/stores.js'

const ALL_TABLES = [
  'approvals',
  'audit_events',
  'kv',
  'operation_targets',
  'operations',
  'plans',
  'principals',
  'review_sessions',
  'selection_exclusions',
  'selection_members',
  'selections',
  'tokens',
  'webhook_deliveries',
]

const T0 = '2025-01-31T12:00:00.000Z'
const T1 = '2025-01-31T13:00:00.000Z'

/** Runs `body` against a fresh store of `kind` and always drops it. */
async function withStore(
  kind: StoreKind,
  body: (store: Store) => Promise<void>,
  options: { migrate?: boolean } = {},
): Promise<void> {
  const { store, drop } = await createTestStore(kind, options)
  try {
    await body(store)
  } finally {
    await drop()
  }
}

async function insertSelection(db: Kysely<Database>, id = 'sel_1'): Promise<void> {
  await db
    .insertInto('selections')
    .values({
      id,
      resource: 'subscriptions',
      environment: 'billing-prod',
      selector: JSON.stringify({ status: 'past_due' }),
      fields: JSON.stringify(['id', 'status']),
      count: 2,
      digest: 'sha256:aa',
      complete: 1,
      completeness: JSON.stringify({ incomplete_reasons: [], warnings: [], continuation: null, scope: {} }),
      consistent_snapshot: 1,
      exclusions: JSON.stringify({}),
      groups: JSON.stringify({}),
      created_at: T0,
      expires_at: T1,
      state: 'frozen',
    })
    .execute()
}

async function insertPlanAndOperation(db: Kysely<Database>, key: string, operationId = 'op_1'): Promise<void> {
  await db
    .insertInto('plans')
    .values({
      id: 'plan_1',
      selection_id: 'sel_1',
      resource: 'subscriptions',
      environment: 'billing-prod',
      action: '{"type":"cancel"}',
      action_type: 'cancel',
      plan_digest: 'sha256:pp',
      selection_digest: 'sha256:aa',
      target_count: 2,
      changes_summary: '{}',
      policy: '{}',
      state: 'approved',
      proposed_by: 'agent_1',
      created_at: T0,
    })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute()
  await db
    .insertInto('operations')
    .values({
      id: operationId,
      plan_id: 'plan_1',
      idempotency_key: key,
      request_fingerprint: 'sha256:rf',
      state: 'pending',
      stop_rules: '{}',
      counts: '{}',
      created_by: 'agent_1',
      created_at: T0,
      updated_at: T0,
    })
    .execute()
}

describe('parseStoreUrl', () => {
  it('reads SQLite file paths and the in-memory form', () => {
    assert.deepEqual(parseStoreUrl('sqlite:./data/warrant.db'), {
      dialect: 'sqlite',
      filename: './data/warrant.db',
      memory: false,
      display: 'sqlite:./data/warrant.db',
    })
    assert.equal(parseStoreUrl('sqlite:/var/lib/warrant.db').dialect, 'sqlite')
    assert.deepEqual(
      [parseStoreUrl('sqlite:/abs/w.db'), parseStoreUrl('sqlite:///abs/w.db')].map((l) => l.dialect === 'sqlite' && l.filename),
      ['/abs/w.db', '/abs/w.db'],
    )
    const memory = parseStoreUrl('sqlite::memory:')
    assert.equal(memory.dialect === 'sqlite' && memory.memory, true)
  })

  it('reads PostgreSQL URLs and masks the password for display', () => {
    for (const url of ['postgres://warrant:s3cret@db.internal:5432/warrant', 'postgresql://warrant:s3cret@db.internal/warrant']) {
      const location = parseStoreUrl(url)
      assert.equal(location.dialect, 'postgres')
      assert.equal(location.dialect === 'postgres' && location.connectionString, url)
      assert.ok(!location.display.includes('s3cret'), location.display)
      assert.match(location.display, /warrant:\*\*\*@db\.internal/)
    }
  })

  const bad: Array<[url: string, problem: RegExp]> = [
    ['', /empty/],
    ['   ', /empty/],
    ['warrant.db', /no scheme/],
    ['mysql://u:s3cret@h/db', /scheme "mysql:" is not supported/],
    ['sqlite:', /no file path/],
    ['sqlite://host/w.db', /names a host/],
    ['sqlite:./w.db?mode=ro', /query string/],
    ['sqlite:./data/', /names a folder/],
    ['postgres:///db', /no host/],
    ['postgres://u:s3cret@/db', /not a valid PostgreSQL URL/],
    ['postgres://u:s3cret@h/a/b', /single database name/],
    ['postgres://u:s3cret@h:99999/db', /not a valid PostgreSQL URL/],
    ['postgres://u:%zz@h/db', /badly percent-encoded password/],
  ]
  for (const [url, problem] of bad) {
    it(`rejects ${JSON.stringify(url)} naming the problem`, () => {
      assert.throws(
        () => parseStoreUrl(url),
        (error: unknown) => {
          assert.ok(error instanceof InvalidStoreUrlError)
          assert.match(error.message, problem)
          assert.ok(!error.message.includes('s3cret'), `password leaked: ${error.message}`)
          return true
        },
      )
    })
  }

  it('createStore rejects a bad URL before touching anything', async () => {
    await assert.rejects(createStore({ url: 'redis://localhost' }), InvalidStoreUrlError)
  })

  it('createStore names the masked URL when PostgreSQL is unreachable', async () => {
    await assert.rejects(createStore({ url: 'postgres://u:s3cret@127.0.0.1:1/db' }), (error: unknown) => {
      assert.ok(error instanceof Error)
      assert.match(error.message, /cannot connect to PostgreSQL store "postgres:\/\/u:\*\*\*@127\.0\.0\.1:1\/db"/)
      assert.ok(!error.message.includes('s3cret'))
      return true
    })
  })
})

describe('sqlite specifics', () => {
  it('creates the parent folder, and uses WAL, foreign keys and SQLite busy_timeout 0 (the store waits for a lock on timers, sqlite-busy-wait-async.test.ts)', async () => {
    const dir = await createTempDir()
    try {
      const file = join(dir.path, 'nested', 'deeper', 'warrant.db')
      const store = await createStore({ url: `sqlite:${file}` })
      try {
        assert.equal(existsSync(file), true)
        const pragma = async (name: string) => (await sql.raw<Record<string, unknown>>(`pragma ${name}`).execute(store.db)).rows[0]
        assert.deepEqual(await pragma('journal_mode'), { journal_mode: 'wal' })
        assert.deepEqual(await pragma('foreign_keys'), { foreign_keys: 1 })
        assert.deepEqual(await pragma('busy_timeout'), { timeout: 0 })
      } finally {
        await store.close()
      }
    } finally {
      await dir.drop()
    }
  })

  it('runs with synchronous=FULL on every open, not only the first (WAL would default to NORMAL)', async () => {
    const dir = await createTempDir()
    try {
      const url = `sqlite:${join(dir.path, 'warrant.db')}`
      for (const open of ['first', 'second', 'third']) {
        const store = await createStore({ url })
        try {
          const row = (await sql.raw<Record<string, unknown>>('pragma synchronous').execute(store.db)).rows[0]
          // 2 is FULL (0 OFF, 1 NORMAL, 3 EXTRA)
          assert.deepEqual(row, { synchronous: 2 }, `${open} open`)
          assert.deepEqual((await sql.raw<Record<string, unknown>>('pragma journal_mode').execute(store.db)).rows[0], { journal_mode: 'wal' })
        } finally {
          await store.close()
        }
      }
    } finally {
      await dir.drop()
    }
  })

  it('hands the event loop back while a long run of statements goes on', async () => {
    const store = await createStore({ url: 'sqlite::memory:' })
    try {
      await store.migrate()
      const ticks: number[] = []
      const timer = setInterval(() => ticks.push(Date.now()), 5)
      try {
        const started = Date.now()
        // statements only: no I/O wait anywhere, the shape of a freeze or an operation on a SQLite store; 600 ms
        // of wall time, so that a process given a fraction of a busy core still runs dozens of 10 ms slices
        for (let i = 0; Date.now() - started < 600; i++) await store.db.insertInto('kv').values({ key: `k${i}`, value: 'v' }).execute()
      } finally {
        clearInterval(timer)
      }
      assert.ok(ticks.length >= 5, `the timer fired ${ticks.length} times during 600 ms of statements`)
    } finally {
      await store.close()
    }
  })

  it('hands the event loop back during a bulk write through its own prepared statement, inside one transaction', async () => {
    const store = await createStore({ url: 'sqlite::memory:' })
    try {
      await store.migrate()
      const insert = store.sqlite!.prepare('insert into kv (key, value) values (?, ?)')
      const keys = Array.from({ length: 400 }, (_, i) => `k${i}`)
      const ticks: number[] = []
      const timer = setInterval(() => ticks.push(Date.now()), 5)
      try {
        await store.db.transaction().execute(() =>
          inSlices(keys, 10, (key) => {
            insert.run(key, 'v')
            // each row made slow, so the batch runs well past one slice
            const until = performance.now() + 1
            while (performance.now() < until);
          }),
        )
      } finally {
        clearInterval(timer)
      }
      assert.ok(ticks.length >= 5, `the timer fired ${ticks.length} times during 400 ms of inserts`)
      assert.equal(Number((await sql<{ n: number }>`select count(*) as n from kv`.execute(store.db)).rows[0]!.n), 400)
    } finally {
      await store.close()
    }
  })

  it('works in memory', async () => {
    const store = await createStore({ url: 'sqlite::memory:' })
    try {
      assert.deepEqual((await store.migrate()).applied, Object.keys(storeMigrations))
      await store.db.insertInto('kv').values({ key: 'k', value: 'v' }).execute()
      assert.equal((await store.db.selectFrom('kv').select('value').executeTakeFirstOrThrow()).value, 'v')
    } finally {
      await store.close()
    }
  })
})

for (const kind of STORE_KINDS) {
  describe(kind, () => {
    it('migrates an empty database and lists what it applied', () =>
      withStore(
        kind,
        async (store) => {
          const outcome = await store.migrate()
          assert.equal(outcome.error, undefined)
          assert.deepEqual(outcome.applied, Object.keys(storeMigrations))
          const tables = (await store.db.introspection.getTables()).map((t) => t.name).sort()
          assert.deepEqual(
            tables.filter((name) => !name.startsWith('warrant_migration')),
            ALL_TABLES,
          )
        },
        { migrate: false },
      ))

    it('a second migrate applies nothing', () =>
      withStore(kind, async (store) => {
        const again = await store.migrate()
        assert.deepEqual(again, { applied: [] })
      }))

    it('reports a failing migration instead of throwing, and a later run recovers', () =>
      withStore(
        kind,
        async (store) => {
          const broken = {
            ...storeMigrations,
            '9999_broken': { up: async (db: Kysely<any>) => void (await sql`select * from no_such_table`.execute(db)) },
          }
          const outcome = await migrateToLatest({ db: store.db, migrations: broken })
          assert.equal(outcome.error?.migration, '9999_broken')
          assert.match(outcome.error?.message ?? '', /store migration "9999_broken" failed: .*no_such_table/)
          assert.ok(outcome.error?.cause instanceof Error)
          // every pending migration runs in one transaction, on either store: none of them stays applied
          assert.deepEqual(outcome.applied, [])
          assert.match(outcome.error?.message ?? '', /rolled back with 0001_initial, /)
          const tables = (await store.db.introspection.getTables()).map((t) => t.name)
          assert.equal(tables.includes('selections'), false)

          const recovered = await store.migrate()
          assert.equal(recovered.error, undefined)
          assert.deepEqual(recovered.applied, Object.keys(storeMigrations))
        },
        { migrate: false },
      ))

    it('writes and reads every table, JSON included', () =>
      withStore(kind, async (store) => {
        const { db } = store
        const completeness = {
          incomplete_reasons: [{ code: 'MORE_PAGES_AVAILABLE', message: 'ünïcødé ✓ "quoted"' }],
          warnings: [{ code: 'STALE_INDEX', source: 'search' }],
          continuation: { kind: 'next_cursor', cursor: 'abc' },
          scope: { resource: 'subscriptions', consistent_snapshot: false },
        }
        const selection = {
          id: 'sel_1',
          resource: 'subscriptions',
          environment: 'billing-prod (acct 4411)',
          selector: JSON.stringify({ status: { eq: 'past_due' }, tenant: ['a', 'b'] }),
          fields: JSON.stringify(['id', 'status', 'owner']),
          count: 2,
          digest: 'sha256:aa',
          complete: 0 as const,
          completeness: JSON.stringify(completeness),
          consistent_snapshot: 0 as const,
          exclusions: JSON.stringify({ 'vip-accounts': 1 }),
          groups: JSON.stringify({ status: { past_due: 2 } }),
          created_by: 'agent_1',
          created_at: T0,
          expires_at: T1,
          state: 'frozen' as const,
          origin: null,
          builder: 'host:1:abcd:ef01',
          lease_until: null,
          failure: null,
          idempotency_key: 'agent_1\u001fkey-1',
          request_fingerprint: 'sha256:bb',
          upstream_digest: 'sha256:bb',
          lookalike_ids: JSON.stringify({ groups: [['admin-I', 'admin-l']], more_groups: 0 }),
          members_pruned_at: null,
        }
        await db.insertInto('selections').values(selection).execute()
        const readSelection = await db.selectFrom('selections').selectAll().where('id', '=', 'sel_1').executeTakeFirstOrThrow()
        assert.deepEqual(readSelection, selection)
        assert.deepEqual(JSON.parse(readSelection.completeness), completeness)

        const members = [
          { selection_id: 'sel_1', ord: 0, record_id: 'sub_1', version: 'etag-1', fields: JSON.stringify({ status: 'past_due', n: 1.5 }), source: 'primary' },
          { selection_id: 'sel_1', ord: 1, record_id: 'sub_2', version: null, fields: JSON.stringify({ status: null }), source: null },
        ]
        await db.insertInto('selection_members').values(members).execute()
        const readMembers = await db.selectFrom('selection_members').selectAll().where('selection_id', '=', 'sel_1').where('ord', '>=', 0).orderBy('ord').execute()
        assert.deepEqual(readMembers, members)

        const exclusion = { selection_id: 'sel_1', rule: 'vip-accounts', ord: 0, record_id: 'sub_9', version: '7', fields: JSON.stringify({ vip: true }), source: 'primary' }
        await db.insertInto('selection_exclusions').values(exclusion).execute()
        assert.deepEqual(await db.selectFrom('selection_exclusions').selectAll().execute(), [exclusion])

        const plan = {
          id: 'plan_1',
          selection_id: 'sel_1',
          resource: 'subscriptions',
          environment: 'billing-prod (acct 4411)',
          action: '{"payload":{"reason":"x"},"type":"cancel"}',
          action_type: 'cancel',
          plan_digest: 'sha256:pp',
          selection_digest: 'sha256:aa',
          target_count: 2,
          changes_summary: JSON.stringify({ status: { from: 'past_due', to: 'cancelled' } }),
          policy: JSON.stringify({ approvers: 1 }),
          state: 'pending' as const,
          proposed_by: 'agent_1',
          created_at: T0,
          expires_at: null,
          compensates: null,
          config_drifted_at: T1,
          config_drift: JSON.stringify(['action_redefined']),
        }
        await db.insertInto('plans').values(plan).execute()
        assert.deepEqual(await db.selectFrom('plans').selectAll().executeTakeFirstOrThrow(), plan)
        // canonical text comes back byte for byte
        assert.equal((await db.selectFrom('plans').select('action').executeTakeFirstOrThrow()).action, plan.action)

        const approval = {
          id: 'appr_1',
          plan_id: 'plan_1',
          plan_digest: 'sha256:pp',
          decision: 'approve' as const,
          principal: 'rev_1',
          comment: null,
          decided_at: T0,
          expires_at: T1,
          token_id: 'tok_1',
          ttl_given_until: T1,
        }
        await db.insertInto('approvals').values(approval).execute()
        assert.deepEqual(await db.selectFrom('approvals').selectAll().executeTakeFirstOrThrow(), approval)

        const operation = {
          id: 'op_1',
          plan_id: 'plan_1',
          idempotency_key: 'key-1',
          request_fingerprint: 'sha256:rf',
          state: 'halted' as const,
          stop_rules: JSON.stringify({ max_failures: 3 }),
          halt_reason: JSON.stringify({ code: 'AUTH_FAILURE', status: 401 }),
          counts: JSON.stringify({ succeeded: 1, failed: 0 }),
          lease_owner: 'gw-a',
          lease_expires_at: T1,
          execution: null,
          paused_until: T1,
          pause_reason: JSON.stringify({ reason: 'source "main" is rate limiting (429); retry after 5 s' }),
          created_by: 'agent_1',
          created_at: T0,
          updated_at: T1,
          finished_at: null,
        }
        await db.insertInto('operations').values(operation).execute()
        assert.deepEqual(await db.selectFrom('operations').selectAll().executeTakeFirstOrThrow(), operation)

        await db
          .insertInto('operation_targets')
          .values({ operation_id: 'op_1', ord: 0, record_id: 'sub_1', source: 'main', expected_version: 'etag-1', state: 'pending', updated_at: T0 })
          .execute()
        await db
          .updateTable('operation_targets')
          .set((eb) => ({
            state: 'failed',
            before: JSON.stringify({ status: 'past_due' }),
            after: JSON.stringify({ status: 'cancelled' }),
            upstream_status: 409,
            error: JSON.stringify({ message: 'conflict' }),
            reason: 'version changed',
            attempts: eb('attempts', '+', 1),
            updated_at: T1,
          }))
          .where('operation_id', '=', 'op_1')
          .where('ord', '=', 0)
          .execute()
        assert.deepEqual(await db.selectFrom('operation_targets').selectAll().executeTakeFirstOrThrow(), {
          operation_id: 'op_1',
          ord: 0,
          record_id: 'sub_1',
          expected_version: 'etag-1',
          state: 'failed',
          before: '{"status":"past_due"}',
          after: '{"status":"cancelled"}',
          after_version: null,
          upstream_status: 409,
          error: '{"message":"conflict"}',
          reason: 'version changed',
          attempts: 1,
          updated_at: T1,
          unknown_since: null,
          rate_limit_hits: 0,
          source: 'main',
        })

        const event = {
          seq: 1,
          level: 'run' as const,
          at: T0,
          principal: 'agent_1',
          surface: 'mcp',
          action: 'commit',
          summary: JSON.stringify({ targets: 2 }),
          selection_id: 'sel_1',
          plan_id: 'plan_1',
          operation_id: 'op_1',
          target_id: null,
          details: null,
          prev_hash: '0'.repeat(64),
          hash: 'f'.repeat(64),
        }
        await db.insertInto('audit_events').values(event).execute()
        assert.deepEqual(await db.selectFrom('audit_events').selectAll().executeTakeFirstOrThrow(), event)

        const principal = { id: 'agent_1', name: 'billing agent', role: 'agent' as const, scopes: JSON.stringify(['subscriptions:read']), created_at: T0, disabled_at: null, last_disabled_at: null }
        await db.insertInto('principals').values(principal).execute()
        assert.deepEqual(await db.selectFrom('principals').selectAll().executeTakeFirstOrThrow(), principal)

        const token = { id: 'tok_1', principal_id: 'agent_1', token_hash: 'sha256:th', created_at: T0, expires_at: T1, revoked_at: null, last_used_at: null }
        await db.insertInto('tokens').values(token).execute()
        assert.deepEqual(await db.selectFrom('tokens').selectAll().executeTakeFirstOrThrow(), token)
        await assert.rejects(db.insertInto('tokens').values({ ...token, id: 'tok_2' }).execute())

        await db.insertInto('kv').values({ key: 'cursor_signing_key', value: 'c2VjcmV0' }).execute()
        assert.deepEqual(await db.selectFrom('kv').selectAll().execute(), [{ key: 'cursor_signing_key', value: 'c2VjcmV0' }])
      }))

    it('the (selection_id, ord) key and the (selection_id, record_id) pair reject duplicates', () =>
      withStore(kind, async ({ db }) => {
        await insertSelection(db)
        await db.insertInto('selection_members').values({ selection_id: 'sel_1', ord: 0, record_id: 'a', version: null, fields: '{}' }).execute()
        await assert.rejects(
          db.insertInto('selection_members').values({ selection_id: 'sel_1', ord: 0, record_id: 'b', version: null, fields: '{}' }).execute(),
          /unique|duplicate/i,
        )
        await assert.rejects(
          db.insertInto('selection_members').values({ selection_id: 'sel_1', ord: 1, record_id: 'a', version: null, fields: '{}' }).execute(),
          /unique|duplicate/i,
        )
        // the same ord in another selection is fine
        await insertSelection(db, 'sel_2')
        await db.insertInto('selection_members').values({ selection_id: 'sel_2', ord: 0, record_id: 'a', version: null, fields: '{}' }).execute()
        const count = await db.selectFrom('selection_members').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
        assert.equal(count.n, 2)
      }))

    it('the idempotency key admits one operation', () =>
      withStore(kind, async ({ db }) => {
        await insertSelection(db)
        await insertPlanAndOperation(db, 'key-1', 'op_1')
        await assert.rejects(insertPlanAndOperation(db, 'key-1', 'op_2'), /unique|duplicate/i)
        await insertPlanAndOperation(db, 'key-2', 'op_2')
      }))

    it('references are enforced and selection members go with their selection', () =>
      withStore(kind, async ({ db }) => {
        await assert.rejects(
          db.insertInto('selection_members').values({ selection_id: 'missing', ord: 0, record_id: 'a', version: null, fields: '{}' }).execute(),
          /foreign key/i,
        )
        await insertSelection(db)
        await db.insertInto('selection_members').values({ selection_id: 'sel_1', ord: 0, record_id: 'a', version: null, fields: '{}' }).execute()
        await db.deleteFrom('selections').where('id', '=', 'sel_1').execute()
        assert.deepEqual(await db.selectFrom('selection_members').selectAll().execute(), [])
      }))

    it('bigint columns and count(*) come back as JS numbers', () =>
      withStore(kind, async ({ db }) => {
        await insertSelection(db)
        const big = 2 ** 40 + 7
        await db.insertInto('selection_members').values({ selection_id: 'sel_1', ord: big, record_id: 'a', version: null, fields: '{}' }).execute()
        const row = await db.selectFrom('selection_members').select('ord').where('ord', '>', 2 ** 40).executeTakeFirstOrThrow()
        assert.equal(typeof row.ord, 'number')
        assert.equal(row.ord, big)
        const selection = await db.selectFrom('selections').select(['count', 'complete']).executeTakeFirstOrThrow()
        assert.deepEqual(selection, { count: 2, complete: 1 })
        await db.insertInto('audit_events').values({
          seq: Number.MAX_SAFE_INTEGER, level: 'call', at: T0, surface: 'executor', action: 'PATCH', summary: '{}', prev_hash: '', hash: 'h',
        }).execute()
        const max = await db.selectFrom('audit_events').select((eb) => eb.fn.max('seq').as('seq')).executeTakeFirstOrThrow()
        assert.equal(max.seq, Number.MAX_SAFE_INTEGER)
        const n = await db.selectFrom('selection_members').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()
        assert.equal(n.n, 1)
      }))

    it('defaults attempts to 0 and closes twice without error', async () => {
      const { store, drop } = await createTestStore(kind)
      try {
        await insertSelection(store.db)
        await insertPlanAndOperation(store.db, 'k')
        await store.db.insertInto('operation_targets').values({ operation_id: 'op_1', ord: 0, record_id: 'a', expected_version: null, state: 'in_flight', updated_at: T0 }).execute()
        const target = await store.db.selectFrom('operation_targets').select('attempts').executeTakeFirstOrThrow()
        assert.equal(target.attempts, 0)
        await store.close()
        await store.close()
      } finally {
        await drop()
      }
    })

    it('logs migrations and failed queries, leaving query parameters out', async () => {
      const lines: Array<{ level: string; fields: Record<string, unknown>; message: string }> = []
      const record = (level: string) => (fields: object, message: string) => lines.push({ level, fields: { ...fields }, message })
      const log = { info: record('info'), warn: record('warn'), error: record('error') }
      const { store, drop } = await createTestStore(kind, { migrate: false, log })
      try {
        await store.migrate()
        assert.deepEqual(lines.map((l) => [l.level, l.message]), [['info', 'store migrated']])
        await assert.rejects(store.db.insertInto('kv').values({ key: 'k', value: null as unknown as string }).execute())
        const failure = lines.at(-1)
        assert.equal(failure?.message, 'store query failed')
        assert.match(String(failure?.fields.sql), /insert into "kv"/)
        assert.ok(!('parameters' in (failure?.fields ?? {})))
      } finally {
        await drop()
      }
    })

    it('now() is an ISO timestamp from the given clock', async () => {
      const { store, drop } = await createTestStore(kind, { migrate: false, clock: () => new Date(T0) })
      try {
        assert.equal(store.now(), T0)
        assert.equal(store.dialect, kind)
      } finally {
        await drop()
      }
    })
  })
}

describe('postgres specifics', () => {
  it('int8 parsing is scoped to the store pool, not pg globally', () =>
    withStore('postgres', async (store) => {
      const { rows } = await sql<{ n: unknown }>`select 5::int8 as n`.execute(store.db)
      assert.deepEqual(rows, [{ n: 5 }])
      const client = new pg.Client({ connectionString: TEST_POSTGRES_ADMIN_URL })
      await client.connect()
      try {
        const raw = await client.query<{ n: unknown }>('select 5::int8 as n')
        assert.deepEqual(raw.rows, [{ n: '5' }])
      } finally {
        await client.end()
      }
    }))

  it('an int8 beyond 2^53 is an error, not a wrong number', () =>
    withStore('postgres', async (store) => {
      await assert.rejects(sql`select 9007199254740993::int8 as n`.execute(store.db), /MAX_SAFE_INTEGER/)
      // the pool is still usable afterwards
      assert.deepEqual((await sql`select 1::int8 as n`.execute(store.db)).rows, [{ n: 1 }])
    }))

  it('two instances migrating at once: one applies, the other waits and finds nothing to do', async () => {
    const first = await createTestStore('postgres', { migrate: false })
    const second = await createStore({ url: first.url })
    try {
      const outcomes = await Promise.all([first.store.migrate(), second.migrate()])
      assert.deepEqual(outcomes.map((o) => o.error), [undefined, undefined])
      assert.deepEqual(outcomes.map((o) => o.applied).sort((a, b) => b.length - a.length), [Object.keys(storeMigrations), []])
    } finally {
      await second.close()
      await first.drop()
    }
  })
})

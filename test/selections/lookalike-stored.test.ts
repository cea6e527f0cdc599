import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import BetterSqlite3 from 'better-sqlite3'
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely'
import { loadConfigFile } from '../../src/config/index.js'
import { SYSTEM_ACTOR } from '../../src/contract/index.js'
import { createLogger, type Gateway, openGateway } from '../../src/gateway/index.js'
import { createCursorCodec } from '../../src/inventory/index.js'
import { createPlanService } from '../../src/plans/index.js'
import type { Catalogue } from '../../src/resources/index.js'
import { createSelectionService, lookalikeIds } from '../../src/selections/index.js'
import { migrateToLatest, storeMigrations } from '../../src/store/index.js'
import { type OddUpstream, startOddUpstream, thingsResourceConfig } from '../plans/support/odd-upstream.js'
import { type CliWorkspace, createCliWorkspace } from '../support/cli-config.js'
import { STORE_KINDS, type TempDir, type TestDatabase, createTempDir, createTestPostgresDatabase, createTestStore } from '../support/stores.js'

/** Ids drawn alike (three by l, I and 1; a ligature), a word's target, among 2,500 plain ones: a walk over them is three pages. */
const ALIKE = ['admin-I', 'admin-l', 'admin-1', 'ﬁle-7', 'file-7', 'user-10']
const ORDINARY = Array.from({ length: 2_500 }, (_, i) => `row-${String(i).padStart(5, '0')}`)
const LEDGER_ROWS = 1_500

/** Counts the statements that read `selection_members`: a walk over a selection's ids is one per 1,000 members. */
function memberReads(): KyselyPlugin & { count: number } {
  const plugin = {
    count: 0,
    transformQuery({ node }: PluginTransformQueryArgs): RootOperationNode {
      if (node.kind === 'SelectQueryNode' && JSON.stringify(node).includes('"name":"selection_members"')) plugin.count += 1
      return node
    },
    async transformResult({ result }: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
      return result
    },
  }
  return plugin
}

/** The gateway's selection and plan services on its store, each member read counted. */
function counted(gw: Gateway) {
  const reads = memberReads()
  const store = { ...gw.store, db: gw.store.db.withPlugin(reads) }
  const cursorCodec = createCursorCodec({ key: Buffer.alloc(32, 7) })
  const selections = createSelectionService({ store, catalogue: gw.catalogue, cursorCodec })
  return { reads, selections, plans: createPlanService({ store, catalogue: gw.catalogue, selections, execution: gw.config.execution, cursorCodec }) }
}

/**
 * A frozen selection's look-alike ids were found by walking every member id, twice, in each process that viewed it
 * (and kept in that process only): 60–150 ms of CPU per 100,000 members, again after a restart and in every other
 * instance. The freeze finds them as it writes the members and stores them with the selection: a view, in any
 * process, reads the answer, the same answer the walk gives.
 */
for (const kind of STORE_KINDS)
  describe(`look-alike ids stored with the selection (${kind} store, frozen by a warrant subprocess, odd http upstream)`, () => {
    let upstream: OddUpstream
    let ledgerDir: TempDir
    let pg: TestDatabase | null = null
    let ws: CliWorkspace
    let gw: Gateway
    before(async () => {
      upstream = await startOddUpstream([...ALIKE, ...ORDINARY].map((id) => ({ id, name: `name of ${id}`, status: 'open', note: 'n' })))
      // an upstream keyed by integers: no two ids are drawn alike
      ledgerDir = await createTempDir('warrant-ledger-')
      const ledger = join(ledgerDir.path, 'ledger.db')
      const db = new BetterSqlite3(ledger)
      db.exec('create table ledger (id integer primary key, version integer not null, name text)')
      const insert = db.prepare('insert into ledger values (?, 1, ?)')
      for (let id = 1; id <= LEDGER_ROWS; id++) insert.run(id, `n${id}`)
      db.close()
      pg = kind === 'postgres' ? await createTestPostgresDatabase() : null
      ws = await createCliWorkspace({
        count: 5,
        edit: (raw) => {
          if (pg) raw.store = pg.url
          raw.resources.things = thingsResourceConfig(upstream.origin)
          raw.resources.ledger = {
            environment: raw.resources.subscriptions.environment,
            connector: { kind: 'sql', url: `sqlite:${ledger}`, table: 'ledger' },
            fields: { id: 'integer', version: 'integer', name: 'string' },
            id_field: 'id',
            version_field: 'version',
            review_fields: ['id', 'name'],
          }
        },
      })
      gw = await openGateway({ config: loadConfigFile(ws.configPath), log: createLogger({ level: 'silent' }), executors: false })
    })
    after(async () => {
      await gw?.close()
      await ws?.drop()
      await pg?.drop()
      await ledgerDir?.drop()
      await upstream?.close()
    })

    /** Freezes `resource` in a `warrant select` subprocess: another process than the one viewing it here. */
    async function frozenElsewhere(resource: string): Promise<string> {
      const run = await ws.warrant(['select', resource, '-q'])
      assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`)
      const id = /selection (sel_\S+) froze/.exec(run.stdout)?.[1]
      assert.ok(id, run.stdout)
      return id
    }

    /** What the walk over every member answers (today's answer, kept for selections frozen before 0013). */
    const walked = (id: string, texts: readonly string[] = []) => lookalikeIds({ selection_id: id, digest: '' }, (after, limit) => gw.selections.memberIds(id, after, limit), texts)

    test('another process shows the groups the freeze stored, reading no member id; the same answer the walk gives', { timeout: 180_000 }, async () => {
      const id = await frozenElsewhere('things')
      const { reads, selections, plans } = counted(gw)
      const view = await selections.view(SYSTEM_ACTOR, id)
      assert.equal(reads.count, 1, 'the first page of records only: no walk over the member ids')
      assert.deepEqual(
        view.lookalike_ids.groups.map((g) => g.map((m) => m.id)),
        [
          ['admin-1', 'admin-I', 'admin-l'],
          ['file-7', 'ﬁle-7'],
        ],
      )
      const walk = await walked(id)
      assert.deepEqual(view.lookalike_ids, { groups: walk.groups, more_groups: walk.more_groups })
      assert.deepEqual(JSON.parse(JSON.stringify(view.lookalike_ids)), view.lookalike_ids, 'served as stored, byte for byte')

      // a plan: the groups as stored, the agent's words over the ids in one pass (not two), only when it has words
      const proposed = await plans.propose(SYSTEM_ACTOR, id, { action: { type: 'set_status', params: { status: 'archived as user-1O' } } })
      reads.count = 0
      const plan = await plans.view(SYSTEM_ACTOR, proposed.plan_id)
      const pages = Math.ceil(view.count / 1000)
      assert.ok(reads.count <= pages + 2, `one pass over the ids for the words (${pages} pages), read ${reads.count}`)
      assert.deepEqual(plan.lookalike_ids, await walked(id, ['archived as user-1O']))
      assert.deepEqual(plan.lookalike_ids.named.map((n) => [n.word, n.id]), [['user-1O', 'user-10']])
    })

    test('an integer-keyed upstream stores no group, and its view reads no member id for them', { timeout: 120_000 }, async () => {
      const id = await frozenElsewhere('ledger')
      const row = await gw.store.db.selectFrom('selections').select(['lookalike_ids', 'count']).where('id', '=', id).executeTakeFirstOrThrow()
      assert.equal(Number(row.count), LEDGER_ROWS)
      assert.deepEqual(JSON.parse(row.lookalike_ids!), { groups: [], more_groups: 0 })
      const { reads, selections } = counted(gw)
      assert.deepEqual((await selections.view(SYSTEM_ACTOR, id)).lookalike_ids, { groups: [], more_groups: 0 })
      assert.equal(reads.count, 1)
    })

    test('a selection frozen before 0013 (none stored) is walked once, on its first view, and its groups stored for every process', { timeout: 180_000 }, async () => {
      const id = await frozenElsewhere('things')
      const expected = (await counted(gw).selections.view(SYSTEM_ACTOR, id)).lookalike_ids
      // what the migration leaves on a row frozen before it: the column, empty
      await gw.store.db.updateTable('selections').set({ lookalike_ids: null }).where('id', '=', id).execute()
      const first = counted(gw)
      assert.deepEqual((await first.selections.view(SYSTEM_ACTOR, id)).lookalike_ids, expected)
      assert.ok(first.reads.count > 1, 'walked its member ids')
      const stored = await gw.store.db.selectFrom('selections').select('lookalike_ids').where('id', '=', id).executeTakeFirstOrThrow()
      assert.deepEqual(JSON.parse(stored.lookalike_ids!).groups, [
        ['admin-1', 'admin-I', 'admin-l'],
        ['file-7', 'ﬁle-7'],
      ])
      const next = counted(gw)
      assert.deepEqual((await next.selections.view(SYSTEM_ACTOR, id)).lookalike_ids, expected)
      assert.equal(next.reads.count, 1, 'stored by the first view: not walked again')
    })

    test('a stored value that is not the groups (edited by hand) is walked again, never a failed view', { timeout: 180_000 }, async () => {
      const id = await frozenElsewhere('things')
      await gw.store.db.updateTable('selections').set({ lookalike_ids: '{"groups":"admin"}' }).where('id', '=', id).execute()
      const view = await counted(gw).selections.view(SYSTEM_ACTOR, id)
      assert.deepEqual(view.lookalike_ids, { groups: (await walked(id)).groups, more_groups: 0 })
    })
  })

/** The store's history up to the migration that added the column: what an older Warrant left. */
const BEFORE_0013 = Object.fromEntries(Object.entries(storeMigrations).filter(([name]) => name < '0013'))

for (const kind of STORE_KINDS)
  test(`a selection frozen by a Warrant before 0013 gets its groups on first view, stored then (${kind} store)`, { timeout: 60_000 }, async () => {
    const { store, drop } = await createTestStore(kind, { migrate: false })
    try {
      assert.equal((await migrateToLatest({ db: store.db, migrations: BEFORE_0013 })).error, undefined)
      const T0 = new Date().toISOString()
      await store.db
        .insertInto('selections')
        .values({
          id: 'sel_old', resource: 'gone', environment: 'staging', selector: '{"filter":{},"exclude":[]}', fields: '["id"]', count: 3, digest: 'sha256:old', complete: 1,
          completeness: JSON.stringify({ status: 'complete', truncated: false, incomplete_reasons: [], continuation: null, warnings: [], scope: {} }),
          consistent_snapshot: 0, exclusions: '[]', groups: '[]', created_by: 'agent', created_at: T0, expires_at: new Date(Date.now() + 3_600_000).toISOString(),
          state: 'frozen', origin: null, builder: null, lease_until: null, failure: null, idempotency_key: null, request_fingerprint: null, upstream_digest: null,
        })
        .execute()
      const ids = ['admin-I', 'admin-l', 'row-1']
      await store.db.insertInto('selection_members').values(ids.map((id, i) => ({ selection_id: 'sel_old', ord: i + 1, record_id: id, version: 'v', fields: JSON.stringify({ id }), source: null }))).execute()
      assert.deepEqual((await store.migrate()).applied, ['0013_selection_lookalike_ids', '0014_principal_last_disabled', '0015_target_rate_limit_hits', '0016_rate_limited_target_index', '0017_target_source', '0018_plan_config_drift', '0019_approval_ttl_given', '0020_selection_origin_index', '0021_selection_members_pruned'])
      const reads = memberReads()
      const catalogue = { names: [] } as unknown as Catalogue
      const selections = createSelectionService({ store: { ...store, db: store.db.withPlugin(reads) }, catalogue, cursorCodec: createCursorCodec({ key: Buffer.alloc(32, 1) }) })
      const view = await selections.view(SYSTEM_ACTOR, 'sel_old')
      assert.deepEqual(view.lookalike_ids, { groups: [[{ id: 'admin-I', code_points: ['U+0049'] }, { id: 'admin-l', code_points: ['U+006C'] }]], more_groups: 0 })
      assert.ok(reads.count > 1, 'its member ids were walked')
      const row = await store.db.selectFrom('selections').select('lookalike_ids').where('id', '=', 'sel_old').executeTakeFirstOrThrow()
      assert.deepEqual(JSON.parse(row.lookalike_ids!), { groups: [['admin-I', 'admin-l']], more_groups: 0 })
      reads.count = 0
      assert.deepEqual((await selections.view(SYSTEM_ACTOR, 'sel_old')).lookalike_ids, view.lookalike_ids)
      assert.equal(reads.count, 1, 'read as stored the second time')
    } finally {
      await drop()
    }
  })

import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import mysql from 'mysql2/promise'
import { parseConfig, resolvePaths } from '../../../src/config/index.js'
import { startGatewayOn, type GatewayFixture } from '../../support/gateway-fixture.js'
import { openReviewSession } from '../../support/review-session.js'
import { createTempDir, TEST_MYSQL_ADMIN_URL, type TempDir } from '../../support/stores.js'

/**
 * A platform engineer's walk through the whole product on a MariaDB table shaped unlike the demo: a VARCHAR key
 * under utf8mb4_general_ci (case- and PAD SPACE-insensitive: 'ac-0001' = 'AC-0001' = 'ac-0001 '), keys in mixed
 * case with trailing spaces and tabs, a case-insensitive stage column with NULLs, a TINYINT(1) flag, a DECIMAL,
 * and a TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6) column as the version; 3,200 rows, so a walk spans many pages.
 * Every answer is compared with the database's own, counted independently (byte-exact, as Warrant compares).
 */
const ROWS = 3200
const STAGES = ['Lead', 'lead', 'LEAD', 'Won', 'lost', null] as const

function keyOf(i: number): string {
  let key = `${['AC-', 'ac-', 'Ac-'][i % 3]}${String(i).padStart(4, '0')}`
  if (i % 7 === 0) key += ' '
  if (i % 11 === 0) key += '\t'
  return key
}

const admin = new URL(TEST_MYSQL_ADMIN_URL)
const connect = (database?: string) =>
  mysql.createConnection({ host: admin.hostname, port: Number(admin.port || 3306), user: decodeURIComponent(admin.username) || 'root', password: decodeURIComponent(admin.password), database })
const reachable = await connect().then(
  async (c) => (await c.end(), null),
  (error: Error) => `MariaDB is not reachable at ${admin.host} (${error.message}): the walk needs it`,
)

describe('a walk through Warrant on a MariaDB table with collated keys', { skip: reachable ?? false }, () => {
  const database = `warrant_walk_${process.pid}`
  let db: mysql.Connection
  let dir: TempDir
  let fx: GatewayFixture
  const count = async (where: string): Promise<number> => Number(((await db.query(`select count(*) n from leads where ${where}`))[0] as { n: number }[])[0]!.n)

  before(async () => {
    const root = await connect()
    await root.query(`drop database if exists ${database}`)
    await root.query(`create database ${database} character set utf8mb4 collate utf8mb4_general_ci`)
    await root.end()
    db = await connect(database)
    await db.query(`create table leads (
      lead_key varchar(40) collate utf8mb4_general_ci not null primary key,
      stage varchar(20) collate utf8mb4_general_ci null,
      active tinyint(1) not null default 1,
      amount decimal(12,2) null,
      owner varchar(30) null,
      changed_at timestamp(6) not null default current_timestamp(6) on update current_timestamp(6)) engine=innodb`)
    const rows = Array.from({ length: ROWS }, (_, i) => [keyOf(i), STAGES[i % STAGES.length], i % 2, i % 50 === 0 ? null : ((i * 13.37) % 10000).toFixed(2), i % 5 === 0 ? null : `owner${i % 4}`])
    await db.query('insert into leads (lead_key, stage, active, amount, owner) values ?', [rows])
    dir = await createTempDir('warrant-mariadb-walk-')
    const url = new URL(TEST_MYSQL_ADMIN_URL)
    url.pathname = `/${database}`
    const config = resolvePaths(
      parseConfig(
        {
          store: `sqlite:${dir.path}/warrant.db`,
          audit: { key: { file: 'audit.key', create: true } },
          resources: {
            leads: {
              environment: { name: 'crm-walk' },
              connector: { kind: 'sql', url: url.toString(), table: 'leads', source: 'crm-db' },
              fields: { lead_key: 'string', stage: 'string', active: 'boolean', amount: 'number', owner: 'string', changed_at: 'timestamp' },
              id_field: 'lead_key',
              version_field: 'changed_at',
              review_fields: ['lead_key', 'stage', 'active', 'amount', 'owner'],
              group_by: ['stage', 'owner'],
              visibility: { description: 'every lead', restricted: false },
              actions: { reassign: { params: { to: { type: 'string', required: true } }, set: { owner: '{{params.to}}' }, precondition: { active: true }, reversible: true } },
            },
          },
        },
        'walk config',
      ),
      dir.path,
    )
    fx = { ...(await startGatewayOn(config, { resources: ['leads'] })), dir: dir.path, upstreamUrl: url.toString(), storeUrl: config.store.url }
  })
  after(async () => {
    await fx?.close()
    await db?.end()
    const root = await connect()
    await root.query(`drop database if exists ${database}`)
    await root.end()
    await dir?.drop()
  })

  const search = async (filter: unknown, pageSize = 97) => {
    const res = await fx.as('agent')('POST', '/v1/resources/leads/search', { filter, page_size: pageSize })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    return res.body
  }

  test('a walk of every row in pages of 97 returns each key once, exactly as stored, complete on one snapshot', async () => {
    const envelope = await search({})
    const stored = ((await db.query('select lead_key from leads'))[0] as { lead_key: string }[]).map((r) => r.lead_key)
    const keys = envelope.items.map((i: { lead_key: string }) => i.lead_key)
    assert.equal(envelope.complete, true, JSON.stringify(envelope.incomplete_reasons))
    assert.equal(envelope.scope.consistent_snapshot, true)
    assert.equal(keys.length, ROWS)
    assert.deepEqual([...keys].sort(), [...stored].sort())
  })

  for (const [filter, where] of [
    [{ stage: 'lead' }, "cast(stage as binary) = 'lead'"],
    [{ stage: 'Lead' }, "cast(stage as binary) = 'Lead'"],
    [{ stage: { not_in: ['Lead'] } }, "cast(stage as binary) <> 'Lead'"],
    [{ stage: { is_null: true } }, 'stage is null'],
    [{ amount: { is_null: true }, stage: { in: ['lead', 'LEAD'] } }, "amount is null and cast(stage as binary) in ('lead', 'LEAD')"],
    [{ stage: { gt: 'Lead' } }, "cast(stage as binary) > 'Lead'"],
    [{ amount: { gte: 5000 } }, 'amount >= 5000'],
    [{ amount: { lt: 100 } }, 'amount < 100'],
    [{ active: false, stage: 'LEAD' }, "active = 0 and cast(stage as binary) = 'LEAD'"],
    [{ lead_key: { gte: 'ac' } }, "cast(lead_key as binary) >= 'ac'"],
    [{ lead_key: 'ac-0007 ' }, "cast(lead_key as binary) = 'ac-0007 '"],
    [{ lead_key: 'ac-0007' }, "cast(lead_key as binary) = 'ac-0007'"],
  ] as const)
    test(`search ${JSON.stringify(filter)} matches the database's own byte-exact count`, async () => {
      const envelope = await search(filter)
      assert.equal(envelope.complete, true, JSON.stringify(envelope.incomplete_reasons))
      assert.equal(envelope.items.length, await count(where))
      assert.equal(new Set(envelope.items.map((i: { lead_key: string }) => i.lead_key)).size, envelope.items.length)
    })

  test('a read by id finds the key as stored, and a key the collation calls equal is refused naming the stored one', async () => {
    const exact = await fx.as('agent')('GET', `/v1/resources/leads/records?id=${encodeURIComponent('ac-0007 ')}`)
    assert.equal(exact.status, 200, JSON.stringify(exact.body))
    assert.equal(exact.body.record.lead_key, 'ac-0007 ')
    for (const spelled of ['ac-0007', 'AC-0007 ']) {
      const other = await fx.as('agent')('GET', `/v1/resources/leads/records?id=${encodeURIComponent(spelled)}`)
      assert.equal(other.status, 400, JSON.stringify(other.body))
      assert.match(other.body.error.message, /stored as "ac-0007 "/)
    }
  })

  test('select, propose, approve on the review page, commit, read outcomes, compensate', async () => {
    const selection = await fx.as('agent')('POST', '/v1/resources/leads/selections', { filter: { stage: 'lead', active: true } })
    assert.equal(selection.status, 201, JSON.stringify(selection.body))
    assert.equal(selection.body.complete, true)
    assert.equal(selection.body.count, await count("cast(stage as binary) = 'lead' and active = 1"))
    const plan = await fx.as('agent')('POST', `/v1/selections/${selection.body.selection_id}/plans`, { action: { type: 'reassign', params: { to: 'rita' } } })
    assert.equal(plan.status, 201, JSON.stringify(plan.body))
    const review = await openReviewSession(fx.base, fx.tokens.reviewer)
    const page = await review.get(`/review/plans/${plan.body.plan_id}`)
    assert.equal(page.status, 200)
    assert.match(page.html, /ac-0007\[U\+0020\]/, 'a trailing space in a key is shown, not lost')
    const decided = await review.post(`/review/plans/${plan.body.plan_id}/decision`, { plan_digest: plan.body.plan_digest, decision: 'approve', comment: 'walk' })
    assert.equal(decided.status, 303, decided.html.slice(0, 500))

    // other writers, after the freeze: a key re-cased and one padded (the collation still matches them), an owner
    // changed (the version moves), an owner changed with the version kept, a flag cleared
    await db.query("update leads set lead_key = 'AC-0013' where lead_key = 'ac-0013'")
    await db.query("update leads set lead_key = 'ac-0019 ', changed_at = changed_at where lead_key = 'ac-0019'")
    await db.query("update leads set owner = 'other' where lead_key = 'ac-0031'")
    await db.query("update leads set owner = 'sneaky', changed_at = changed_at where lead_key = 'ac-0037'")
    await db.query("update leads set active = 0 where lead_key = 'ac-0043'")

    const committed = await fx.as('agent')('POST', `/v1/plans/${plan.body.plan_id}/commit`, { expected_digest: plan.body.plan_digest }, { 'idempotency-key': 'walk-1' })
    assert.equal(committed.status, 202, JSON.stringify(committed.body))
    const done = await finished(committed.body.operation_id)
    const results = await resultsOf(committed.body.operation_id)
    const outcome = (id: string) => results.find((r) => r.id === id)
    assert.match(outcome('ac-0013')!.error, /stored as "AC-0013"/)
    assert.match(outcome('ac-0019')!.error, /stored as "ac-0019 "/)
    assert.equal(outcome('ac-0031')!.outcome, 'skipped')
    assert.equal(outcome('ac-0037')!.outcome, 'skipped')
    assert.equal(outcome('ac-0043')!.outcome, 'skipped')
    assert.deepEqual(done.counts.failed + done.counts.skipped, 5)
    // every row written is one the ledger calls succeeded, and no other
    const succeeded = results.filter((r) => r.outcome === 'succeeded').map((r) => r.id)
    const written = ((await db.query("select lead_key from leads where owner = 'rita'"))[0] as { lead_key: string }[]).map((r) => r.lead_key)
    assert.deepEqual([...written].sort(), [...succeeded].sort())

    const compensation = await fx.as('agent')('POST', `/v1/operations/${committed.body.operation_id}/compensation`)
    assert.equal(compensation.status, 201, JSON.stringify(compensation.body))
    const restore = await openReviewSession(fx.base, fx.tokens.reviewer2)
    await restore.get(`/review/plans/${compensation.body.plan_id}`)
    const approved = await restore.post(`/review/plans/${compensation.body.plan_id}/decision`, { plan_digest: compensation.body.plan_digest, decision: 'approve' })
    assert.equal(approved.status, 303, approved.html.slice(0, 500))
    const undo = await fx.as('agent')('POST', `/v1/plans/${compensation.body.plan_id}/commit`, { expected_digest: compensation.body.plan_digest }, { 'idempotency-key': 'walk-2' })
    assert.equal(undo.status, 202, JSON.stringify(undo.body))
    const undone = await finished(undo.body.operation_id)
    assert.equal(undone.counts.succeeded, succeeded.length, JSON.stringify(undone.counts))
    assert.equal(await count("owner = 'rita'"), 0)
  })

  async function finished(operationId: string): Promise<any> {
    for (const deadline = Date.now() + 120_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
      const res = await fx.as('agent')('GET', `/v1/operations/${operationId}`)
      if (!['pending', 'running'].includes(res.body.state)) return res.body
    }
    assert.fail(`operation ${operationId} did not finish`)
  }

  async function resultsOf(operationId: string): Promise<any[]> {
    const out: any[] = []
    let cursor: string | null = null
    do {
      const res = await fx.as('agent')('GET', `/v1/operations/${operationId}/results${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ''}`)
      assert.equal(res.status, 200, JSON.stringify(res.body))
      out.push(...res.body.results)
      cursor = res.body.next_cursor ?? null
    } while (cursor)
    return out
  }
})

import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import BetterSqlite3 from 'better-sqlite3'
import { loadConfigFile, type ResourceConfig } from '../../src/config/index.js'
import { createSqlConnector } from '../../src/connectors/sql/index.js'
import type { SourceRecord } from '../../src/connectors/connector.js'
import { DEMO_STATUSES, ensureDemoData, generateDemoRows } from '../../src/demo/index.js'
import { createTempDir, createTestMysqlDatabase, createTestPostgresDatabase, type TempDir, type TestDatabase } from '../support/stores.js'

const demoResource = loadConfigFile(new URL('../../config/demo.yaml', import.meta.url).pathname).resources.subscriptions!

function resourceAt(url: string): ResourceConfig {
  if (demoResource.connector.kind !== 'sql') throw new Error('the demo resource is a sql resource')
  return { ...demoResource, connector: { ...demoResource.connector, url } }
}

/** Every record of the demo table, through the sql connector (so both dialects are compared normalised). */
async function readAll(url: string): Promise<SourceRecord[]> {
  const connector = createSqlConnector({ resource: resourceAt(url) })
  const session = await connector.openSession()
  try {
    const records: SourceRecord[] = []
    let position: string | null = null
    do {
      const page = await session.readPage({ source: connector.source, filter: {}, position, pageSize: 2_000 })
      if (page.kind !== 'page') throw new Error(`demo read failed: ${JSON.stringify(page)}`)
      records.push(...page.items)
      position = page.next
    } while (position !== null)
    return records
  } finally {
    await session.close()
    await connector.close()
  }
}

const digestOf = (records: readonly SourceRecord[]) => createHash('sha256').update(JSON.stringify(records)).digest('hex')

function rawDigest(file: string): string {
  const db = new BetterSqlite3(file, { readonly: true })
  try {
    return createHash('sha256').update(JSON.stringify(db.prepare('select * from subscriptions order by id').all())).digest('hex')
  } finally {
    db.close()
  }
}

describe('demo data', () => {
  let dir: TempDir
  let pgDatabase: TestDatabase
  let sqliteRecords: SourceRecord[]
  const first = () => join(dir.path, 'a', 'demo.db')

  before(async () => {
    dir = await createTempDir('warrant-demo-')
    pgDatabase = await createTestPostgresDatabase()
  })
  after(async () => {
    await dir?.drop()
    await pgDatabase?.drop()
  })

  it('creates the table with 10,000 records in a new SQLite file (and its folder)', async () => {
    const result = await ensureDemoData({ url: `sqlite:${first()}` })
    assert.deepEqual(result, { created: true, count: 10_000 })
    sqliteRecords = await readAll(`sqlite:${first()}`)
    assert.equal(sqliteRecords.length, 10_000)
    assert.equal(sqliteRecords[0]!.id, 'sub_00001')
    assert.equal(sqliteRecords.at(-1)!.id, 'sub_10000')
  })

  it('is idempotent: a second call changes nothing', async () => {
    const before = rawDigest(first())
    assert.deepEqual(await ensureDemoData({ url: `sqlite:${first()}` }), { created: false, count: 10_000 })
    assert.deepEqual(await ensureDemoData({ url: `sqlite:${first()}`, count: 50 }), { created: false, count: 10_000 })
    assert.equal(rawDigest(first()), before)
  })

  it('is deterministic: the same rows in another file, and the same records on PostgreSQL', async () => {
    const second = join(dir.path, 'b', 'demo.db')
    await ensureDemoData({ url: `sqlite:${second}` })
    assert.equal(rawDigest(second), rawDigest(first()))
    assert.deepEqual(await ensureDemoData({ url: pgDatabase.url }), { created: true, count: 10_000 })
    assert.deepEqual(await ensureDemoData({ url: pgDatabase.url }), { created: false, count: 10_000 })
    const pgRecords = await readAll(pgDatabase.url)
    assert.equal(digestOf(pgRecords), digestOf(sqliteRecords))
    // a different seed gives different data
    const third = join(dir.path, 'c', 'demo.db')
    await ensureDemoData({ url: `sqlite:${third}`, count: 100, seed: 1 })
    assert.notEqual(digestOf(await readAll(`sqlite:${third}`)), digestOf(sqliteRecords.slice(0, 100)))
  })

  it('gives the same records on MariaDB, read through the connector', async () => {
    const mariadb = await createTestMysqlDatabase()
    try {
      assert.deepEqual(await ensureDemoData({ url: mariadb.url }), { created: true, count: 10_000 })
      assert.deepEqual(await ensureDemoData({ url: mariadb.url }), { created: false, count: 10_000 })
      assert.equal(digestOf(await readAll(mariadb.url)), digestOf(sqliteRecords))
    } finally {
      await mariadb.drop()
    }
  })

  it('looks like the article: ~20% past_due, money owed only when past_due, disputed and legal_hold among past_due eu', () => {
    const fields = sqliteRecords.map((r) => r.fields)
    const pastDue = fields.filter((f) => f.status === 'past_due')
    assert.ok(pastDue.length > 1_700 && pastDue.length < 2_300, `past_due: ${pastDue.length}`)
    for (const f of fields) {
      assert.ok((DEMO_STATUSES as readonly unknown[]).includes(f.status))
      assert.ok(['eu', 'us', 'apac'].includes(f.region as string))
      assert.equal(f.status === 'past_due', (f.amount_due as number) > 0, `amount_due of ${f.id}`)
      assert.ok(Array.isArray(f.tags))
      assert.ok(f.collection === 'active' || f.collection === 'paused')
      assert.equal(f.pause_reason, '')
      assert.equal(f.version, 1)
      assert.match(f.card_token as string, /^tok_[0-9a-f]{24}$/)
      assert.match(f.updated_at as string, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
      assert.match(f.owner as string, /@example\.com$/)
    }
    const pastDueEu = pastDue.filter((f) => f.region === 'eu')
    const tagged = (tag: string) => pastDueEu.filter((f) => (f.tags as string[]).includes(tag)).length
    assert.ok(tagged('disputed') >= 10, `disputed: ${tagged('disputed')}`)
    assert.ok(tagged('legal_hold') >= 5, `legal_hold: ${tagged('legal_hold')}`)
    assert.ok(tagged('enterprise') >= 10, `enterprise: ${tagged('enterprise')}`)
    assert.ok(pastDueEu.some((f) => f.collection === 'paused'), 'some are already paused (the precondition excludes them)')
    assert.ok(pastDueEu.length - tagged('disputed') - tagged('legal_hold') > 300, 'plenty left once the exceptions are excluded')
    assert.ok(new Set(fields.map((f) => f.tenant)).size >= 3 && new Set(fields.map((f) => f.owner)).size >= 3)
    assert.ok(fields.some((f) => (f.notes as string).length > 0))
  })

  it('has the article cases even in a tiny set', () => {
    const rows = [...generateDemoRows(12)]
    const byId = new Map(rows.map((r) => [r.id, r]))
    for (const [id, tag] of [['sub_00003', 'disputed'], ['sub_00007', 'legal_hold'], ['sub_00011', 'enterprise']] as const) {
      const row = byId.get(id)!
      assert.equal(row.status, 'past_due')
      assert.equal(row.region, 'eu')
      assert.ok((JSON.parse(row.tags) as string[]).includes(tag))
    }
  })

  it('zero-pads ids so lexical order is numeric order, whatever the count', () => {
    const ids = [...generateDemoRows(120_000)].map((r) => r.id)
    assert.equal(ids[0], 'sub_000001')
    assert.deepEqual(ids, [...ids].sort())
  })

  it('the bundled config reads the demo table: the standing approval selector finds past_due eu records', async () => {
    const connector = createSqlConnector({ resource: resourceAt(`sqlite:${first()}`) })
    const session = await connector.openSession()
    try {
      const page = await session.readPage({ source: connector.source, filter: { status: 'past_due', region: 'eu', tags: { contains: 'legal_hold' } }, position: null, pageSize: 1_000 })
      assert.ok(page.kind === 'page' && page.items.length > 0 && page.next === null)
    } finally {
      await session.close()
      await connector.close()
    }
  })
})

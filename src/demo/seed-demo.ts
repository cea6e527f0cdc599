import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import BetterSqlite3 from 'better-sqlite3'
import { Kysely, MysqlDialect, PostgresDialect, SqliteDialect, sql, type Transaction } from 'kysely'
import mysql from 'mysql2'
import pg from 'pg'
import { parseSqlUrl, type SqlDialectName } from '../connectors/sql/url.js'
import { immediateTransaction } from '../store/index.js'

/** The demo table, as `config/demo.yaml` declares it. */
export const DEMO_TABLE = 'subscriptions'
export const DEMO_DEFAULT_COUNT = 10_000
export const DEMO_DEFAULT_SEED = 4411

export const DEMO_STATUSES = ['active', 'past_due', 'paused', 'canceled', 'trialing'] as const
export const DEMO_REGIONS = ['eu', 'us', 'apac'] as const
export const DEMO_TENANTS = ['acme-retail', 'globex', 'initech', 'umbrella-health', 'stark-logistics'] as const
export const DEMO_OWNERS = [
  'collections-eu@example.com',
  'collections-us@example.com',
  'finance-apac@example.com',
  'billing-ops@example.com',
  'ana.ruiz@example.com',
] as const
/** Each region's teams: an owner is picked among them, so owners group the way regions do. */
const OWNERS_BY_REGION: Readonly<Record<(typeof DEMO_REGIONS)[number], readonly string[]>> = {
  eu: ['collections-eu@example.com', 'ana.ruiz@example.com', 'billing-ops@example.com'],
  us: ['collections-us@example.com', 'billing-ops@example.com'],
  apac: ['finance-apac@example.com', 'billing-ops@example.com'],
}
export const DEMO_TAGS = ['disputed', 'legal_hold', 'enterprise', 'vip', 'annual'] as const

/** One demo row as stored: tags as JSON text, as the sql connector expects. */
export interface DemoRow {
  readonly id: string
  readonly customer_name: string
  readonly status: (typeof DEMO_STATUSES)[number]
  readonly region: (typeof DEMO_REGIONS)[number]
  readonly tenant: string
  readonly owner: string
  readonly amount_due: number
  readonly tags: string
  readonly collection: 'active' | 'paused'
  readonly pause_reason: string
  readonly version: number
  readonly updated_at: string
  readonly card_token: string
  readonly notes: string
}

export interface EnsureDemoDataOptions {
  /** `sqlite:/path/demo.db` (folder and file are created), `postgres://…` or `mysql://…` (the database must exist). */
  readonly url: string
  readonly count?: number
  readonly seed?: number
}

const NAME_FIRST = [
  'Northwind', 'Orchard', 'Bluebird', 'Cedar', 'Harbor', 'Summit', 'Juniper', 'Copper', 'Lantern', 'Meadow',
  'Granite', 'Willow', 'Beacon', 'Falcon', 'Riverside', 'Saffron', 'Kestrel', 'Ember', 'Atlas', 'Pioneer',
  'Silverline', 'Maple', 'Tidewater', 'Brightside',
]
const NAME_SECOND = [
  'Parts', 'Studio', 'Labs', 'Logistics', 'Foods', 'Analytics', 'Dental', 'Outfitters', 'Media', 'Robotics',
  'Bakery', 'Consulting', 'Freight', 'Clinic', 'Software', 'Textiles', 'Energy', 'Games', 'Partners', 'Supply',
]
const NOTES = [
  '',
  '',
  '',
  'Customer asked for a copy of the last three invoices.',
  'Escalated to the account manager after the second reminder.',
  'Call Marta Lindqvist on +46 70 123 45 67 before changing anything.',
  'Card expired last month; customer says a new one is on the way.',
  'Bank transfer announced, reference INV-2025-0412.',
  'Do not contact before the end of the quarter (CFO request).',
  'Billing contact: j.okafor@customer.example, prefers email.',
  'Partial payment received, remainder disputed.',
]

/** Records whose content is fixed, so every generated set has these cases whatever its size or seed. */
const FORCED: Readonly<Record<number, string>> = { 3: 'disputed', 7: 'legal_hold', 11: 'enterprise' }

/**
 * A small, well-known 32-bit PRNG (mulberry32): integer arithmetic only, so the same seed gives the same
 * numbers on every machine.
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/**
 * The demo records, generated from `seed`: identical on every machine. Ids are `sub_00001` … zero-padded, so
 * lexical order is numeric order. About 20% are past_due (the only ones owing money); records 3, 7 and 11
 * are past_due in the eu and tagged disputed, legal_hold and enterprise respectively.
 */
export function* generateDemoRows(count = DEMO_DEFAULT_COUNT, seed = DEMO_DEFAULT_SEED): Generator<DemoRow> {
  const random = seededRandom(seed)
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!
  const weighted = <T>(items: readonly (readonly [T, number])[]): T => {
    let r = random()
    for (const [item, weight] of items) {
      if (r < weight) return item
      r -= weight
    }
    return items[items.length - 1]![0]
  }
  const hex = (n: number) => {
    let out = ''
    while (out.length < n) out += Math.floor(random() * 0x1_0000_0000).toString(16).padStart(8, '0')
    return out.slice(0, n)
  }
  const width = Math.max(5, String(count).length)
  const base = Date.UTC(2025, 0, 1)
  for (let i = 1; i <= count; i++) {
    let status = weighted<DemoRow['status']>([
      ['active', 0.53],
      ['past_due', 0.2],
      ['paused', 0.07],
      ['canceled', 0.08],
      ['trialing', 0.12],
    ])
    let region = weighted<DemoRow['region']>([
      ['eu', 0.42],
      ['us', 0.38],
      ['apac', 0.2],
    ])
    const customerName = `${pick(NAME_FIRST)} ${pick(NAME_SECOND)}`
    const tenant = pick(DEMO_TENANTS)
    const ownerRoll = random()
    const pastDue = status === 'past_due'
    const tagSet = new Set<string>()
    if (random() < (pastDue ? 0.12 : 0.02)) tagSet.add('disputed')
    if (random() < (pastDue ? 0.06 : 0.02)) tagSet.add('legal_hold')
    if (random() < 0.12) tagSet.add('enterprise')
    if (random() < 0.06) tagSet.add('vip')
    if (random() < 0.2) tagSet.add('annual')
    let amount = Math.round((20 + random() * 4980) * 100) / 100
    const pausedRoll = random()
    let collection: DemoRow['collection'] = status === 'paused' ? 'paused' : pausedRoll < (pastDue ? 0.06 : 0.03) ? 'paused' : 'active'
    const updatedAt = new Date(base + Math.floor(random() * 90 * 86_400) * 1000).toISOString()
    const cardToken = `tok_${hex(24)}`
    const notes = pick(NOTES)

    const forced = FORCED[i]
    if (forced) {
      status = 'past_due'
      region = 'eu'
      collection = 'active'
      tagSet.add(forced)
      if (amount < 100) amount += 100
    }
    yield {
      id: `sub_${String(i).padStart(width, '0')}`,
      customer_name: customerName,
      status,
      region,
      tenant,
      owner: OWNERS_BY_REGION[region][Math.floor(ownerRoll * OWNERS_BY_REGION[region].length)]!,
      amount_due: status === 'past_due' ? amount : 0,
      tags: JSON.stringify(DEMO_TAGS.filter((t) => tagSet.has(t))),
      collection,
      pause_reason: '',
      version: 1,
      updated_at: updatedAt,
      card_token: cardToken,
      notes,
    }
  }
}

/**
 * Creates the demo `subscriptions` table if absent and fills it with `count` generated records. Does nothing
 * when the table already has rows, so it is safe on every start (and, on PostgreSQL, from several instances
 * at once: an advisory lock serialises them).
 *
 * @example await ensureDemoData({ url: 'sqlite:./.warrant/demo.db' }) // { created: true, count: 10000 }
 */
export async function ensureDemoData(options: EnsureDemoDataOptions): Promise<{ created: boolean; count: number }> {
  const count = options.count ?? DEMO_DEFAULT_COUNT
  const seed = options.seed ?? DEMO_DEFAULT_SEED
  if (!Number.isSafeInteger(count) || count < 0) throw new RangeError(`count must be a non-negative integer, got ${count}`)
  const location = parseSqlUrl(options.url)
  let db: Kysely<any>
  if (location.dialect === 'sqlite') {
    mkdirSync(dirname(location.filename), { recursive: true })
    const database = new BetterSqlite3(location.filename)
    // WAL: the connector's read sessions hold a snapshot while writes go on
    database.pragma('journal_mode = WAL')
    database.pragma('busy_timeout = 5000')
    db = new Kysely<any>({ dialect: new SqliteDialect({ database }) })
  } else if (location.dialect === 'postgres') {
    const pool = new pg.Pool({ connectionString: location.connectionString, max: 1 })
    pool.on('error', () => undefined)
    db = new Kysely<any>({ dialect: new PostgresDialect({ pool }) })
  } else {
    const { host, port, user, password, database } = location
    const pool = mysql.createPool({ host, port, user, password, database, connectionLimit: 1, timezone: 'Z', charset: 'utf8mb4' })
    db = new Kysely<any>({ dialect: new MysqlDialect({ pool }) })
  }
  // DATETIME(3) on MySQL takes a date, not the ISO string's Z
  const stored = (row: DemoRow) => (location.dialect === 'mysql' ? { ...row, updated_at: new Date(row.updated_at) } : row)
  try {
    return await inTransaction(db, location.dialect, async (trx) => {
      await createDemoTable(trx, location.dialect)
      const existing = await countRows(trx)
      if (existing > 0) return { created: false, count: existing }
      let batch: DemoRow[] = []
      for (const row of generateDemoRows(count, seed)) {
        batch.push(row)
        if (batch.length === 500) {
          await trx.insertInto(DEMO_TABLE).values(batch.map(stored)).execute()
          batch = []
        }
      }
      if (batch.length > 0) await trx.insertInto(DEMO_TABLE).values(batch.map(stored)).execute()
      return { created: true, count: await countRows(trx) }
    })
  } finally {
    await db.destroy()
  }
}

async function inTransaction<T>(db: Kysely<any>, dialect: SqlDialectName, work: (trx: Kysely<any>) => Promise<T>): Promise<T> {
  if (dialect === 'postgres') {
    return db.transaction().execute(async (trx: Transaction<any>) => {
      await sql`select pg_advisory_xact_lock(${DEMO_DEFAULT_SEED}, hashtext(${DEMO_TABLE}))`.execute(trx)
      return work(trx)
    })
  }
  if (dialect === 'mysql') {
    return db.transaction().execute(async (trx: Transaction<any>) => {
      // a named lock serialises instances; it is released when the connection returns to the pool
      await sql`select get_lock(${`warrant_demo_${DEMO_TABLE}`}, 60)`.execute(trx)
      try {
        return await work(trx)
      } finally {
        await sql`select release_lock(${`warrant_demo_${DEMO_TABLE}`})`.execute(trx)
      }
    })
  }
  // BEGIN IMMEDIATE takes the write lock before the row count is read, so two starts cannot both fill it
  return immediateTransaction(db, work)
}

async function createDemoTable(db: Kysely<any>, dialect: SqlDialectName): Promise<void> {
  if (dialect === 'mysql') return createMysqlDemoTable(db)
  const pgDialect = dialect === 'postgres'
  await db.schema
    .createTable(DEMO_TABLE)
    .ifNotExists()
    // C collation on PostgreSQL: the primary key's order is the code-point order SQLite uses
    // NOT NULL: a SQLite text primary key takes NULLs without it, and an id the catalogue does not prove unique
    // costs every walk a check per page
    .addColumn('id', pgDialect ? sql`text collate "C"` : 'text', (c) => c.primaryKey().notNull())
    .addColumn('customer_name', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('active', 'past_due', 'paused', 'canceled', 'trialing')`))
    .addColumn('region', 'text', (c) => c.notNull())
    .addColumn('tenant', 'text', (c) => c.notNull())
    .addColumn('owner', 'text', (c) => c.notNull())
    .addColumn('amount_due', pgDialect ? sql`numeric(12, 2)` : 'real', (c) => c.notNull().check(sql`amount_due >= 0`))
    .addColumn('tags', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('collection', 'text', (c) => c.notNull().check(sql`collection in ('active', 'paused')`))
    .addColumn('pause_reason', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('updated_at', pgDialect ? 'timestamptz' : 'text', (c) => c.notNull())
    .addColumn('card_token', 'text', (c) => c.notNull())
    .addColumn('notes', 'text', (c) => c.notNull().defaultTo(''))
    .execute()
}

/** The same table in MySQL/MariaDB types; a binary collation keeps the id order the code-point order. */
async function createMysqlDemoTable(db: Kysely<any>): Promise<void> {
  const short = sql`varchar(255)`
  await db.schema
    .createTable(DEMO_TABLE)
    .ifNotExists()
    .addColumn('id', sql`varchar(64) collate utf8mb4_bin`, (c) => c.primaryKey())
    .addColumn('customer_name', short, (c) => c.notNull())
    .addColumn('status', sql`varchar(32)`, (c) => c.notNull().check(sql`status in ('active', 'past_due', 'paused', 'canceled', 'trialing')`))
    .addColumn('region', sql`varchar(32)`, (c) => c.notNull())
    .addColumn('tenant', short, (c) => c.notNull())
    .addColumn('owner', short, (c) => c.notNull())
    .addColumn('amount_due', sql`decimal(12, 2)`, (c) => c.notNull().check(sql`amount_due >= 0`))
    .addColumn('tags', short, (c) => c.notNull().defaultTo('[]'))
    .addColumn('collection', sql`varchar(16)`, (c) => c.notNull().check(sql`collection in ('active', 'paused')`))
    .addColumn('pause_reason', short, (c) => c.notNull().defaultTo(''))
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('updated_at', sql`datetime(3)`, (c) => c.notNull())
    .addColumn('card_token', sql`varchar(64)`, (c) => c.notNull())
    .addColumn('notes', short, (c) => c.notNull().defaultTo(''))
    .modifyEnd(sql`engine = InnoDB default charset = utf8mb4`)
    .execute()
}

async function countRows(db: Kysely<any>): Promise<number> {
  const row = await db.selectFrom(DEMO_TABLE).select(sql<number | string>`count(*)`.as('n')).executeTakeFirst()
  return Number(row?.n ?? 0)
}

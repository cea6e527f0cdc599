import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import BetterSqlite3 from 'better-sqlite3'
import pg from 'pg'
import { SYSTEM_ACTOR } from '../src/contract/index.js'
import { ensureDemoData } from '../src/demo/index.js'
import { createCursorCodec } from '../src/inventory/index.js'
import { createCatalogue } from '../src/resources/index.js'
import { createSelectionService } from '../src/selections/index.js'
import { createStore } from '../src/store/index.js'
import { demoConfig } from './fixture.js'
import { interleaved, type Figure } from './measure.js'

const ADMIN_URL = process.env.WARRANT_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'

async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL })
  await client.connect()
  try {
    await client.query(text)
  } finally {
    await client.end()
  }
}

/** A fresh PostgreSQL database on the test server; dropped by `drop`. */
export async function pgDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `warrant_bench_${randomBytes(5).toString('hex')}`
  await adminQuery(`CREATE DATABASE ${name}`)
  const url = new URL(ADMIN_URL)
  url.pathname = `/${name}`
  return { url: url.toString(), drop: () => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) }
}

/** The demo table with `count` rows and a migrated store (both SQLite files, or two PostgreSQL databases) and a selection service on them. */
export async function freezeSetup(kind: 'sqlite' | 'postgres', count: number) {
  const dir = mkdtempSync(join(tmpdir(), 'warrant-bench-'))
  const pgUp = kind === 'postgres' ? await pgDatabase() : null
  const pgStore = kind === 'postgres' ? await pgDatabase() : null
  const upstreamUrl = pgUp ? pgUp.url : `sqlite:${join(dir, 'demo.db')}`
  const config = demoConfig(pgStore ? pgStore.url : `sqlite:${join(dir, 'warrant.db')}`, upstreamUrl)
  await ensureDemoData({ url: upstreamUrl, count })
  const store = await createStore({ url: config.store.url })
  await store.migrate()
  const catalogue = createCatalogue({ config })
  const selections = createSelectionService({ store, catalogue, cursorCodec: createCursorCodec({ key: randomBytes(32) }) })
  const dispose = async () => {
    await catalogue.close()
    await store.close()
    await pgUp?.drop()
    await pgStore?.drop()
    rmSync(dir, { recursive: true, force: true })
  }
  return { upstreamUrl, pgUpstreamUrl: pgUp?.url ?? null, store, selections, dispose }
}

/** Pairs of page reads: each is about a millisecond, so the median needs many to settle (21 swung 1.18–1.35 between runs). */
const PAGE_PAIRS = 101

/**
 * Freezing every record of the demo table (library call, the same service the HTTP API calls) against the
 * engine's own ordered copy of id + version into a new table, in the same database engine; then a page at
 * member count−999 against page 1 of that selection.
 */
export async function benchFreeze(kind: 'sqlite' | 'postgres', count: number, runs: number): Promise<Figure[]> {
  const { upstreamUrl, pgUpstreamUrl, store, selections, dispose } = await freezeSetup(kind, count)
  const lite = pgUpstreamUrl ? null : new BetterSqlite3(upstreamUrl.slice('sqlite:'.length))
  lite?.pragma('synchronous = FULL')
  const client = pgUpstreamUrl ? new pg.Client({ connectionString: pgUpstreamUrl }) : null
  await client?.connect()
  const copy = async () => {
    if (lite) lite.exec('create table bench_copy as select id, version from subscriptions order by id')
    else await client!.query('create table bench_copy as select id, version from subscriptions order by id')
  }
  let last: string | null = null
  const freeze = async () => {
    last = (await selections.create(SYSTEM_ACTOR, 'subscriptions', { page_size: 1000 })).selection_id
  }
  const cleanUp = async () => {
    if (lite) lite.exec('drop table if exists bench_copy')
    else await client!.query('drop table if exists bench_copy')
  }
  try {
    const figures: Figure[] = []
    const label = kind === 'sqlite' ? 'SQLite → SQLite store' : 'PostgreSQL → PostgreSQL store'
    const keep: string[] = []
    const r = await interleaved(runs, copy, async () => {
      await freeze()
      keep.push(last!)
    }, cleanUp)
    figures.push({ name: `freeze ${count.toLocaleString('en')} rows, ${label}`, baseline: 'the engine’s ordered copy of id+version into a new table', ...r, runs, goal: '≤ 3', met: r.ratio <= 3 })
    // paging on the last selection; earlier ones are deleted first so the store holds one
    for (const id of keep.slice(0, -1)) await store.db.deleteFrom('selections').where('id', '=', id).execute()
    const id = keep[keep.length - 1]!
    const deepOrd = count - 1000
    const first = (await selections.page(SYSTEM_ACTOR, id, { limit: 1 })).next_cursor
    void first
    // a cursor to member count−999: walk there once (not timed)
    let cursor: string | undefined
    for (let seen = 0; seen < deepOrd; seen += 1000) cursor = (await selections.page(SYSTEM_ACTOR, id, { cursor, limit: Math.min(1000, deepOrd - seen) })).next_cursor ?? undefined
    const p = await interleaved(
      PAGE_PAIRS,
      () => selections.page(SYSTEM_ACTOR, id, { limit: 100 }),
      () => selections.page(SYSTEM_ACTOR, id, { cursor, limit: 100 }),
    )
    figures.push({ name: `page at member ${(deepOrd + 1).toLocaleString('en')} of that selection (${label})`, baseline: 'page 1 of the same selection', ...p, runs: PAGE_PAIRS, goal: '≤ 1.2', met: p.ratio <= 1.2 })
    return figures
  } finally {
    lite?.close()
    await client?.end()
    await dispose()
  }
}

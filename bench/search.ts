import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import BetterSqlite3 from 'better-sqlite3'
import type { WarrantConfig } from '../src/config/index.js'
import { createSqlConnector } from '../src/connectors/sql/index.js'
import { ensureDemoData } from '../src/demo/index.js'
import { createCursorCodec, searchAll } from '../src/inventory/index.js'
import { createCliWorkspace } from '../test/support/cli-config.js'
import { issueTokens, startServe, stopServe } from '../test/operations/support/serve-process.js'
import { caller } from '../test/operations/support/flow.js'
import { demoConfig } from './fixture.js'
import { interleaved, type Figure } from './measure.js'

const PAGE_SIZE = 500
const DIRECT_WALK = `a direct walk of the upstream with better-sqlite3 (the declared columns, keyset pages of ${PAGE_SIZE}, one read transaction)`

/**
 * The baseline of both search figures: every page of the upstream read straight from the engine with its own
 * client, none of Warrant's code on the way (a baseline that ran through Warrant's connector would move with it):
 * better-sqlite3 on the demo file, the resource's declared columns, keyset pages of `pageSize` in id order inside
 * one read transaction, the connection opened and closed per walk, as the connector's session does.
 */
function directWalk(filename: string, columns: readonly string[], pageSize: number, count: number) {
  const list = columns.map((c) => `"${c}"`).join(', ')
  return async () => {
    const db = new BetterSqlite3(filename, { readonly: true, fileMustExist: true })
    try {
      db.exec('BEGIN')
      const first = db.prepare(`select ${list} from subscriptions order by id limit ${pageSize + 1}`)
      const next = db.prepare(`select ${list} from subscriptions where id > ? order by id limit ${pageSize + 1}`)
      let rows = first.all() as { id: string }[]
      let read = 0
      for (;;) {
        const more = rows.length > pageSize
        read += more ? pageSize : rows.length
        if (!more) break
        rows = next.all(rows[pageSize - 1]!.id) as { id: string }[]
        // a turn of the event loop between pages, as a walk that serves others gives
        await new Promise((resolve) => setImmediate(resolve))
      }
      db.exec('COMMIT')
      if (read !== count) throw new Error(`the direct walk read ${read} of ${count} rows`)
    } finally {
      db.close()
    }
  }
}

/** The demo resource's declared columns, as its connector selects them. */
function declaredColumns(resource: WarrantConfig['resources'][string]): string[] {
  return Object.keys(resource.fields)
}

/** Library `searchAll` of every record against a direct walk of the same pages through the same connector. */
export async function benchSearch(count: number, runs: number): Promise<Figure> {
  const dir = mkdtempSync(join(tmpdir(), 'warrant-bench-search-'))
  const upstream = `sqlite:${join(dir, 'demo.db')}`
  await ensureDemoData({ url: upstream, count })
  const resource = demoConfig(`sqlite:${join(dir, 'warrant.db')}`, upstream).resources.subscriptions!
  const connector = createSqlConnector({ resource })
  const codec = createCursorCodec({ key: randomBytes(32) })
  const pageSize = PAGE_SIZE
  try {
    const direct = directWalk(join(dir, 'demo.db'), declaredColumns(resource), pageSize, count)
    const library = () =>
      searchAll(connector, { resource: 'subscriptions', filter: {}, pageSize }, {}, {
        scope: { resource: 'subscriptions', environment: 'bench', visibility: 'all', restricted: false },
        cursorCodec: codec,
      })
    const r = await interleaved(runs, direct, library, undefined, { warmUp: true })
    return { name: `full search of ${count.toLocaleString('en')} records, library searchAll`, baseline: DIRECT_WALK, ...r, runs, goal: '≤ 1.3', met: r.ratio <= 1.3 }
  } finally {
    await connector.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * The same full search through `warrant serve`'s HTTP API as an agent makes it (one POST search walking every
 * page, the answer received and parsed), against the direct walk of the same upstream file.
 */
export async function benchSearchHttp(count: number, runs: number): Promise<Figure> {
  const ws = await createCliWorkspace({ count })
  const resource = demoConfig(`sqlite:${join(ws.dir, 'unused.db')}`, `sqlite:${join(ws.dir, 'demo.db')}`).resources.subscriptions!
  const { agentToken } = await issueTokens(ws.configPath, { resource: 'subscriptions', actions: [] })
  const served = await startServe(ws.configPath, { compiled: true })
  const agent = caller(served.base, agentToken)
  try {
    const api = async () => {
      const answer = await agent('POST', '/v1/resources/subscriptions/search', { filter: {}, page_size: PAGE_SIZE, budget: { max_items: count } })
      if (answer.status !== 200 || answer.body.complete !== true || answer.body.items.length !== count)
        throw new Error(`search answered ${answer.status}: complete=${answer.body.complete}, ${answer.body.items?.length} items of ${count}`)
    }
    const r = await interleaved(runs, directWalk(join(ws.dir, 'demo.db'), declaredColumns(resource), PAGE_SIZE, count), api, undefined, { warmUp: true })
    return {
      name: `full search of ${count.toLocaleString('en')} records, HTTP API (warrant serve)`,
      baseline: DIRECT_WALK,
      ...r,
      runs,
      goal: '≤ 1.5',
      met: r.ratio <= 1.5,
    }
  } finally {
    await stopServe(served.child, 'SIGTERM')
    await ws.drop()
  }
}

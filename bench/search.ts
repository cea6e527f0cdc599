import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createSqlConnector } from '../src/connectors/sql/index.js'
import { ensureDemoData } from '../src/demo/index.js'
import { createCursorCodec, searchAll } from '../src/inventory/index.js'
import { createCliWorkspace } from '../test/support/cli-config.js'
import { issueTokens, startServe, stopServe } from '../test/operations/support/serve-process.js'
import { caller } from '../test/operations/support/flow.js'
import { demoConfig } from './fixture.js'
import { interleaved, type Figure } from './measure.js'

const PAGE_SIZE = 500

/** The baseline of both search figures: every page of the upstream read straight through the connector. */
function directWalk(connector: ReturnType<typeof createSqlConnector>, pageSize: number) {
  return async () => {
    const session = await connector.openSession()
    let position: string | null = null
    do {
      const page = await session.readPage({ source: connector.sources[0]!, filter: {}, position, pageSize })
      if (page.kind !== 'page') throw new Error(page.kind)
      position = page.next
    } while (position)
    await session.close()
  }
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
    const direct = directWalk(connector, pageSize)
    const library = () =>
      searchAll(connector, { resource: 'subscriptions', filter: {}, pageSize }, {}, {
        scope: { resource: 'subscriptions', environment: 'bench', visibility: 'all', restricted: false },
        cursorCodec: codec,
      })
    const r = await interleaved(runs, direct, library, undefined, { warmUp: true })
    return { name: `full search of ${count.toLocaleString('en')} records, library searchAll`, baseline: `a direct walk of the upstream, page size ${pageSize}`, ...r, runs, goal: '≤ 1.3', met: r.ratio <= 1.3 }
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
  const connector = createSqlConnector({ resource })
  const { agentToken } = await issueTokens(ws.configPath, { resource: 'subscriptions', actions: [] })
  const served = await startServe(ws.configPath)
  const agent = caller(served.base, agentToken)
  try {
    const api = async () => {
      const answer = await agent('POST', '/v1/resources/subscriptions/search', { filter: {}, page_size: PAGE_SIZE, budget: { max_items: count } })
      if (answer.status !== 200 || answer.body.complete !== true || answer.body.items.length !== count)
        throw new Error(`search answered ${answer.status}: complete=${answer.body.complete}, ${answer.body.items?.length} items of ${count}`)
    }
    const r = await interleaved(runs, directWalk(connector, PAGE_SIZE), api, undefined, { warmUp: true })
    return {
      name: `full search of ${count.toLocaleString('en')} records, HTTP API (warrant serve)`,
      baseline: `a direct walk of the upstream, page size ${PAGE_SIZE}`,
      ...r,
      runs,
      goal: '≤ 1.5',
      met: r.ratio <= 1.5,
    }
  } finally {
    await stopServe(served.child, 'SIGTERM')
    await connector.close()
    await ws.drop()
  }
}

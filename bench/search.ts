import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createSqlConnector } from '../src/connectors/sql/index.js'
import { ensureDemoData } from '../src/demo/index.js'
import { createCursorCodec, searchAll } from '../src/inventory/index.js'
import { demoConfig } from './fixture.js'
import { interleaved, type Figure } from './measure.js'

/** Library `searchAll` of every record against a direct walk of the same pages through the same connector. */
export async function benchSearch(count: number, runs: number): Promise<Figure> {
  const dir = mkdtempSync(join(tmpdir(), 'warrant-bench-search-'))
  const upstream = `sqlite:${join(dir, 'demo.db')}`
  await ensureDemoData({ url: upstream, count })
  const resource = demoConfig(`sqlite:${join(dir, 'warrant.db')}`, upstream).resources.subscriptions!
  const connector = createSqlConnector({ resource })
  const codec = createCursorCodec({ key: randomBytes(32) })
  const pageSize = 500
  try {
    const direct = async () => {
      const session = await connector.openSession()
      let position: string | null = null
      do {
        const page = await session.readPage({ source: connector.sources[0]!, filter: {}, position, pageSize })
        if (page.kind !== 'page') throw new Error(page.kind)
        position = page.next
      } while (position)
      await session.close()
    }
    const library = () =>
      searchAll(connector, { resource: 'subscriptions', filter: {}, pageSize }, {}, {
        scope: { resource: 'subscriptions', environment: 'bench', visibility: 'all', restricted: false },
        cursorCodec: codec,
      })
    const r = await interleaved(runs, direct, library)
    return { name: `full search of ${count.toLocaleString('en')} records, library searchAll`, baseline: `a direct walk of the upstream, page size ${pageSize}`, ...r, runs, goal: '≤ 1.3', met: r.ratio <= 1.3 }
  } finally {
    await connector.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

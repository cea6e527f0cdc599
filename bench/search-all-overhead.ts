import { randomBytes } from 'node:crypto'
import { createSqlConnector } from '../src/connectors/sql/index.js'
import { createCursorCodec, searchAll } from '../src/inventory/index.js'
import { benchWorkspace, medianMs } from './fixture.js'
import type { BenchResult } from './run.js'

/** searchAll's bookkeeping (reasons, dedupe, cursor, holding the items) costs at most twice reading the same pages raw. */
export async function benchSearchAllOverhead(): Promise<BenchResult> {
  const ws = await benchWorkspace(50_000)
  const connector = createSqlConnector({ resource: ws.resource })
  const codec = createCursorCodec({ key: randomBytes(32) })
  try {
    const raw = await medianMs(5, async () => {
      const session = await connector.openSession()
      let position: string | null = null
      do {
        const page = await session.readPage({ source: connector.sources[0]!, filter: {}, position, pageSize: 500 })
        if (page.kind !== 'page') throw new Error(page.kind)
        position = page.next
      } while (position)
      await session.close()
    })
    const walked = await medianMs(5, () =>
      searchAll(connector, { resource: 'subscriptions', filter: {}, pageSize: 500 }, {}, {
        scope: { resource: 'subscriptions', environment: 'bench', visibility: 'all', restricted: false },
        cursorCodec: codec,
      }),
    )
    return { name: 'searchAll over 50,000 records vs raw page reads', baseline: `${raw.toFixed(0)} ms`, measured: `${walked.toFixed(0)} ms`, ratio: walked / raw, goal: 2 }
  } finally {
    await connector.close()
    ws.drop()
  }
}

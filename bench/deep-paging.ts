import { randomBytes } from 'node:crypto'
import { SYSTEM_ACTOR } from '../src/contract/index.js'
import { createCursorCodec } from '../src/inventory/index.js'
import { createCatalogue } from '../src/resources/index.js'
import { createSelectionService } from '../src/selections/index.js'
import { createStore } from '../src/store/index.js'
import { benchWorkspace, medianMs } from './fixture.js'
import type { BenchResult } from './run.js'

/** A page far into a large selection costs what the first page costs: paging is an index seek on ord. */
export async function benchDeepPaging(): Promise<BenchResult> {
  const ws = await benchWorkspace(100_000)
  const store = await createStore({ url: ws.config.store })
  await store.migrate()
  const catalogue = createCatalogue({ config: ws.config })
  const selections = createSelectionService({ store, catalogue, cursorCodec: createCursorCodec({ key: randomBytes(32) }) })
  try {
    const view = await selections.create(SYSTEM_ACTOR, 'subscriptions', {})
    // walk to the last page once, remembering the cursor of a page near the end
    let cursor: string | undefined
    let deep: string | undefined
    for (let pages = 0; ; pages++) {
      const page = await selections.page(SYSTEM_ACTOR, view.selection_id, { cursor, limit: 1000 })
      if (!page.next_cursor) break
      cursor = page.next_cursor
      if (pages === 95) deep = cursor
    }
    const first = await medianMs(21, () => selections.page(SYSTEM_ACTOR, view.selection_id, { limit: 100 }))
    const far = await medianMs(21, () => selections.page(SYSTEM_ACTOR, view.selection_id, { cursor: deep, limit: 100 }))
    return { name: `a page at member 96,000 of a ${view.count}-member selection vs the first page`, baseline: `${first.toFixed(2)} ms`, measured: `${far.toFixed(2)} ms`, ratio: far / first, goal: 2 }
  } finally {
    await catalogue.close()
    await store.close()
    ws.drop()
  }
}

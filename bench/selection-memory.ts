import { randomBytes } from 'node:crypto'
import { SYSTEM_ACTOR } from '../src/contract/index.js'
import { createCursorCodec } from '../src/inventory/index.js'
import { createCatalogue } from '../src/resources/index.js'
import { createSelectionService } from '../src/selections/index.js'
import { createStore } from '../src/store/index.js'
import { benchWorkspace } from './fixture.js'
import type { BenchResult } from './run.js'

/** Peak heap growth while freezing a selection, sampled every few milliseconds. */
async function peakHeapGrowth(count: number): Promise<{ mb: number; members: number }> {
  const ws = await benchWorkspace(count)
  const store = await createStore({ url: ws.config.store })
  await store.migrate()
  const catalogue = createCatalogue({ config: ws.config })
  const selections = createSelectionService({ store, catalogue, cursorCodec: createCursorCodec({ key: randomBytes(32) }) })
  try {
    globalThis.gc?.()
    const before = process.memoryUsage().heapUsed
    let peak = before
    const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().heapUsed)), 2)
    const view = await selections.create(SYSTEM_ACTOR, 'subscriptions', {})
    clearInterval(timer)
    peak = Math.max(peak, process.memoryUsage().heapUsed)
    return { mb: (peak - before) / 1e6, members: view.count }
  } finally {
    await catalogue.close()
    await store.close()
    ws.drop()
  }
}

/** Memory does not grow with the selection: freezing 200,000 members peaks near what 20,000 do. */
export async function benchSelectionMemory(): Promise<BenchResult> {
  const small = await peakHeapGrowth(20_000)
  const large = await peakHeapGrowth(200_000)
  // ten times the members; a set held in memory would show about ten times the heap
  const ratio = Math.max(large.mb, 1) / Math.max(small.mb, 1)
  return { name: `peak heap growth freezing ${large.members} vs ${small.members} members`, baseline: `${small.mb.toFixed(1)} MB`, measured: `${large.mb.toFixed(1)} MB`, ratio, goal: 3 }
}

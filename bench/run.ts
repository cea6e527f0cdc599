/**
 * `npm run bench`: speed and memory goals, each measured as a ratio against a baseline in the same run (never
 * as an absolute time, which depends on the machine). Exits 1 when a goal is missed.
 */
import { benchDeepPaging } from './deep-paging.js'
import { benchSearchAllOverhead } from './search-all-overhead.js'
import { benchSelectionMemory } from './selection-memory.js'

export interface BenchResult {
  readonly name: string
  readonly baseline: string
  readonly measured: string
  readonly ratio: number
  readonly goal: number
}

const benches: readonly (() => Promise<BenchResult>)[] = [benchSearchAllOverhead, benchDeepPaging, benchSelectionMemory]
let failed = 0
for (const bench of benches) {
  const r = await bench()
  const ok = r.ratio <= r.goal
  if (!ok) failed++
  console.log(`${ok ? 'ok  ' : 'MISS'} ${r.name}: ratio ${r.ratio.toFixed(2)} (goal ≤ ${r.goal}) — ${r.measured} vs baseline ${r.baseline}`)
}
console.log(`${benches.length - failed} passed, ${failed} failed`)
process.exit(failed === 0 ? 0 : 1)

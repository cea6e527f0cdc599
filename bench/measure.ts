import { cpus, loadavg, totalmem, type as osType, release } from 'node:os'

/** One figure: Warrant against its baseline in the same run, pairs interleaved. */
export interface Figure {
  readonly name: string
  readonly baseline: string
  /** median of the per-pair ratios Warrant / baseline (for throughputs: Warrant's rate / baseline's rate) */
  readonly ratio: number
  readonly range: readonly [number, number]
  readonly warrantMs: number
  readonly baselineMs: number
  readonly runs: number
  /** `≤ 3` (a time ratio) or `≥ 0.8` (a throughput ratio) */
  readonly goal: string
  readonly met: boolean
  readonly note?: string
  /** an absolute figure (no baseline): its unit, and `ratio` holds the value */
  readonly unit?: 'MB' | 'ms'
}

export const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const started = performance.now()
  await fn()
  return performance.now() - started
}

/**
 * Runs baseline and Warrant alternately `runs` times (the order flips every pair, so drift on a shared machine
 * falls on both), and compares the medians; the range is that of the per-pair ratios. `warmUp`: each side runs
 * once first, untimed (a server's first answers compile its code; the baseline's first walk warms its caches).
 */
export async function interleaved(
  runs: number,
  baseline: () => Promise<unknown>,
  warrant: () => Promise<unknown>,
  /** untimed clean-up after each run of either (drop the copy, delete the selection) */
  cleanUp: () => Promise<unknown> = async () => undefined,
  options: { readonly warmUp?: boolean } = {},
): Promise<{ ratio: number; range: [number, number]; warrantMs: number; baselineMs: number }> {
  const w: number[] = []
  const b: number[] = []
  const one = async (fn: () => Promise<unknown>, into: number[]) => {
    into.push(await timed(fn))
    await cleanUp()
  }
  if (options.warmUp) for (const fn of [baseline, warrant]) await one(fn, [])
  for (let i = 0; i < runs; i++) {
    if (i % 2 === 0) {
      await one(baseline, b)
      await one(warrant, w)
    } else {
      await one(warrant, w)
      await one(baseline, b)
    }
  }
  const ratios = w.map((t, i) => t / b[i]!)
  return { ratio: median(ratios), range: [Math.min(...ratios), Math.max(...ratios)], warrantMs: median(w), baselineMs: median(b) }
}

export function machine(): Record<string, unknown> {
  const cpu = cpus()
  return {
    os: `${osType()} ${release()}`,
    cpus: cpu.length,
    cpu_model: cpu[0]?.model ?? 'unknown',
    memory_gb: Math.round((totalmem() / 1e9) * 10) / 10,
    node: process.version,
    load_average_at_start: loadavg().map((l) => Math.round(l * 100) / 100),
  }
}

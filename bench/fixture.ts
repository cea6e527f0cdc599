import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseConfig, type ResourceConfig, type WarrantConfig } from '../src/config/index.js'
import { ensureDemoData } from '../src/demo/index.js'
import { readFileSync } from 'node:fs'
import { parse as parseYaml } from 'yaml'

/** A temp folder with a demo upstream of `count` records and a config pointing at it. */
export async function benchWorkspace(count: number): Promise<{ dir: string; config: WarrantConfig; resource: ResourceConfig; drop(): void }> {
  const dir = mkdtempSync(join(tmpdir(), 'warrant-bench-'))
  const raw = parseYaml(readFileSync(new URL('../config/demo.yaml', import.meta.url), 'utf8')) as Record<string, any>
  raw.store = `sqlite:${join(dir, 'warrant.db')}`
  raw.resources.subscriptions.connector.url = `sqlite:${join(dir, 'demo.db')}`
  const config = parseConfig(raw)
  await ensureDemoData({ url: raw.resources.subscriptions.connector.url, count })
  return { dir, config, resource: config.resources.subscriptions!, drop: () => rmSync(dir, { recursive: true, force: true }) }
}

/** The median of `runs` timings of `fn`, in milliseconds. */
export async function medianMs(runs: number, fn: () => Promise<unknown>): Promise<number> {
  const times: number[] = []
  for (let i = 0; i < runs; i++) {
    const start = performance.now()
    await fn()
    times.push(performance.now() - start)
  }
  times.sort((a, b) => a - b)
  return times[Math.floor(times.length / 2)]!
}

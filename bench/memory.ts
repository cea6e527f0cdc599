import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ensureDemoData } from '../src/demo/index.js'

/** Peak RSS of a process that freezes `count` SQLite rows into a SQLite store (the data is made beforehand). */
export async function benchFreezeRss(count: number): Promise<{ members: number; peak_rss_mb: number; rss_before_mb: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'warrant-bench-rss-'))
  try {
    const upstream = `sqlite:${join(dir, 'demo.db')}`
    await ensureDemoData({ url: upstream, count })
    const out = execFileSync(process.execPath, ['--import', 'tsx', new URL('./rss-child.ts', import.meta.url).pathname, `sqlite:${join(dir, 'warrant.db')}`, upstream], { encoding: 'utf8', maxBuffer: 1 << 20 })
    return JSON.parse(out) as { members: number; peak_rss_mb: number; rss_before_mb: number }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * Not part of `npm run bench`: one freeze of `count` rows (SQLite data into a SQLite store, or PostgreSQL into
 * PostgreSQL), for a CPU profile: `node --import tsx bench/profile-freeze.ts sqlite 100000 out.cpuprofile`
 * (only the freezes are profiled, not the seeding).
 */
import { writeFileSync } from 'node:fs'
import { Session } from 'node:inspector/promises'
import { SYSTEM_ACTOR } from '../src/contract/index.js'
import { freezeSetup } from './freeze.js'

const kind = process.argv[2] === 'postgres' ? 'postgres' : 'sqlite'
const count = Number(process.argv[3] ?? 100_000)
const { selections, dispose } = await freezeSetup(kind, count)
const out = process.argv[4]
const session = new Session()
session.connect()
await session.post('Profiler.enable')
await session.post('Profiler.start')
try {
  for (let i = 0; i < 2; i++) {
    const started = performance.now()
    const view = await selections.create(SYSTEM_ACTOR, 'subscriptions', { page_size: 1000 })
    console.log(`${kind}: froze ${view.count} in ${(performance.now() - started).toFixed(0)} ms`)
  }
  const { profile } = await session.post('Profiler.stop')
  if (out) writeFileSync(out, JSON.stringify(profile))
  // self time per function, highest first (native work of better-sqlite3 shows under its JS caller)
  const self = new Map<string, number>()
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]))
  profile.samples!.forEach((id, i) => {
    const frame = nodes.get(id)!.callFrame
    const key = `${frame.functionName || '(anonymous)'} ${frame.url.split('/').slice(-2).join('/')}`
    self.set(key, (self.get(key) ?? 0) + (profile.timeDeltas![i] ?? 0) / 1000)
  })
  const total = [...self.values()].reduce((a, b) => a + b, 0)
  for (const [key, ms] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 20)) console.log(`${ms.toFixed(0).padStart(7)} ms ${((100 * ms) / total).toFixed(1).padStart(5)}%  ${key}`)
} finally {
  await dispose()
}

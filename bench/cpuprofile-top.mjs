// The heaviest functions of a V8 CPU profile, e.g. of `warrant serve` under the bench
// (`WARRANT_SERVE_CPU_PROF=dir npm run bench -- --quick --only execute` writes one per server):
//
//   node bench/cpuprofile-top.mjs FILE [--top 15] [--by self|incl|file] [--during REGEX]
//
// --by self: time spent in the function itself (a native call such as a SQLite statement or an fsync counts
// for the JS function that made it); incl: time with everything it called (each function once per sample);
// file: self time by script or package. --during: only samples inside the stretches where a frame matching REGEX
// is on the stack (gaps over 200 ms split them), e.g. the executor's writes: 'writeRecord|executeWindow|executeTarget'.
// Idle time is left out of the percentages and printed apart.
import { readFileSync } from 'node:fs'

const args = process.argv.slice(2)
const option = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback)
const file = args[0]
if (!file || file.startsWith('--')) throw new Error('usage: node bench/cpuprofile-top.mjs FILE [--top N] [--by self|incl|file] [--during REGEX]')
const top = Number(option('--top', '15'))
const by = option('--by', 'self')
const during = option('--during', null)

const profile = JSON.parse(readFileSync(file, 'utf8'))
const nodes = new Map(profile.nodes.map((n) => [n.id, n]))
const parent = new Map()
for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id)
const name = (n) => `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.replace(/^.*\/(node_modules|dist)\//, '')}:${n.callFrame.lineNumber + 1}`
const fileOf = (n) => {
  const url = n.callFrame.url
  if (url.includes('node_modules/')) return url.split('node_modules/').pop().split('/').slice(0, url.includes('node_modules/@') ? 2 : 1).join('/')
  return url.replace(/^.*\/dist\//, 'dist/') || n.callFrame.functionName
}
const stack = (id) => {
  const out = []
  for (let at = id; at !== undefined; at = parent.get(at)) out.push(nodes.get(at))
  return out
}

// each sample's time is the delta to the next one
const times = []
let clock = profile.startTime
for (const delta of profile.timeDeltas) times.push((clock += delta))
const duration = (i) => (i + 1 < times.length ? times[i + 1] - times[i] : 0)

let keep = () => true
if (during) {
  const marker = new RegExp(during)
  const stretches = []
  profile.samples.forEach((id, i) => {
    if (!stack(id).some((n) => marker.test(n.callFrame.functionName))) return
    const last = stretches[stretches.length - 1]
    if (last && times[i] - last[1] < 200_000) last[1] = times[i]
    else stretches.push([times[i], times[i]])
  })
  keep = (i) => stretches.some(([from, to]) => times[i] >= from && times[i] <= to)
  console.log(`${stretches.length} stretches with ${during} on the stack: ${stretches.map(([a, b]) => `${((b - a) / 1000).toFixed(0)} ms`).join(', ')}`)
}

const totals = new Map()
let busy = 0
let idle = 0
profile.samples.forEach((id, i) => {
  if (!keep(i)) return
  const time = duration(i)
  const leaf = nodes.get(id)
  if (leaf.callFrame.functionName === '(idle)') return void (idle += time)
  busy += time
  const keys = by === 'incl' ? new Set(stack(id).map(name)) : [by === 'file' ? fileOf(leaf) : name(leaf)]
  for (const key of keys) totals.set(key, (totals.get(key) ?? 0) + time)
})
console.log(`busy ${(busy / 1000).toFixed(0)} ms, idle ${(idle / 1000).toFixed(0)} ms; by ${by}:`)
for (const [key, time] of [...totals].sort((a, b) => b[1] - a[1]).slice(0, top))
  console.log(`${(time / 1000).toFixed(0).padStart(7)} ms ${((100 * time) / busy).toFixed(1).padStart(5)}%  ${key}`)

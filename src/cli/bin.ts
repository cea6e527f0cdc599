#!/usr/bin/env node
// first: V8 settings must be in place before the modules that allocate are evaluated
import './heap-settings.js'
import { recordBeforeEarlyExit } from './cli-audit.js'
import { EXIT } from './exit-status.js'
import { runInterruptCleanups } from './interrupt.js'
import { main } from './main.js'

// `warrant audit export | head`: the reader closed the pipe because it has what it wanted. Stop quietly, as
// Unix tools do, rather than crash on the next write with EPIPE; the command's audit row is written first.
for (const stream of [process.stdout, process.stderr])
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error
    void recordBeforeEarlyExit().finally(() => process.exit(process.exitCode ?? 0))
  })

// Ctrl-C or SIGTERM during a walk or a watch: say so, record the command as interrupted, and exit with the
// shell's status for the signal (130, 143), never one that reads as an answer. The command first undoes what only
// it would ever undo (select, recover: the selection it was building). serve, mcp and commit --wait stop gracefully on
// their own handlers: this one then leaves it to them.
const CLEANUP_MS = 10_000
for (const [signal, status] of [['SIGINT', 130], ['SIGTERM', 143]] as const)
  process.on(signal, () => {
    if (process.listenerCount(signal) > 1) return
    process.stderr.write(`\nwarrant: interrupted (${signal}): no answer was given\n`)
    // the row is marked interrupted first: the command's own failure (its aborted call) then finds it written
    const recorded = recordBeforeEarlyExit({ interrupted: true })
    void Promise.allSettled([recorded, runInterruptCleanups(signal, CLEANUP_MS)]).finally(() => process.exit(status))
  })

// A command whose promise never settles while nothing is left to run (a write never acknowledged, a promise whose
// resolver was dropped): Node would exit on its own, status 0 and no output, which a script reads as success. It is
// a bug, said as one: a line, the command's audit row (internal), and the internal-error status.
let settled = false
process.on('beforeExit', () => {
  if (settled) return
  settled = true
  const failure = new Error('the command ended without an answer: it was waiting for something that can no longer happen')
  process.stderr.write(`warrant: internal error: ${failure.message}\n(this is a bug in Warrant; nothing it printed is a whole answer)\n`)
  void recordBeforeEarlyExit({ failed: failure }).finally(() => process.exit(EXIT.internal))
})

main(process.argv).then((code) => {
  settled = true
  if (code !== 0) process.exitCode = code
})

#!/usr/bin/env node
// first: V8 settings must be in place before the modules that allocate are evaluated
import './heap-settings.js'
import { recordBeforeEarlyExit } from './cli-audit.js'
import { main } from './main.js'

// `warrant audit export | head`: the reader closed the pipe because it has what it wanted. Stop quietly, as
// Unix tools do, rather than crash on the next write with EPIPE; the command's audit row is written first.
for (const stream of [process.stdout, process.stderr])
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error
    void recordBeforeEarlyExit().finally(() => process.exit(process.exitCode ?? 0))
  })

main(process.argv).then((code) => {
  if (code !== 0) process.exitCode = code
})

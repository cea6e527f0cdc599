/**
 * `warrant audit ...` on its own, with main.ts's error handling, until the lead wires `registerAudit` into
 * main.ts: `node --import tsx test/audit/cli-entry.ts audit verify --config <file>`.
 */
import { Command, CommanderError } from 'commander'
import { registerAudit } from '../../src/cli/commands/audit.js'
import { exitCodeOf, isWarrantError } from '../../src/contract/index.js'

const program = new Command().name('warrant').exitOverride()
registerAudit(program)
try {
  await program.parseAsync(process.argv, { from: 'node' })
} catch (error) {
  if (error instanceof CommanderError) process.exitCode = error.exitCode === 0 ? 0 : 2
  else if (isWarrantError(error)) {
    process.stderr.write(`warrant: ${error.code}: ${error.message}\n`)
    process.exitCode = exitCodeOf(error.code)
  } else {
    process.stderr.write(`warrant: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
    process.exitCode = 1
  }
}

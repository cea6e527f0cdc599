import { Command, CommanderError } from 'commander'
import { exitCodeOf, isWarrantError } from '../contract/index.js'
import { registerMcp } from './commands/mcp.js'
import { registerAudit } from './commands/audit.js'
import { registerSearch } from './commands/search.js'
import { registerSelect } from './commands/select.js'
import { registerPlan } from './commands/plan.js'
import { registerApprove } from './commands/approve.js'
import { registerCommit } from './commands/commit.js'
import { registerOperation } from './commands/operation.js'
import { registerFollowUps } from './commands/follow-up.js'
import { registerServe } from './commands/serve.js'
import { registerToken } from './commands/token.js'
import { registerPrincipal } from './commands/principal.js'
import { registerCheck } from './commands/check.js'
import { registerStore } from './commands/store.js'
import { refuseRepeatedOptions } from './repeated-options.js'
import { auditedInvocation } from './cli-audit.js'
import { openCliGateway as openAuditGateway } from './open-cli-gateway.js'
import { wasInterrupted } from './interrupt.js'

/** Every `warrant` command, registered: what `main` runs, and what a test walks to see each command there is. */
export function warrantProgram(): Command {
  const program = new Command()
    .name('warrant')
    .description('A gateway between AI agents and the systems they change: complete-or-declared reads, reviewed bulk writes.')
    .exitOverride()
  registerServe(program)
  registerSearch(program)
  registerSelect(program)
  registerPlan(program)
  registerApprove(program)
  registerCommit(program)
  registerOperation(program)
  registerFollowUps(program)
  registerAudit(program)
  registerToken(program)
  registerPrincipal(program)
  registerMcp(program)
  registerCheck(program)
  registerStore(program)
  refuseRepeatedOptions(program)
  return program
}

/**
 * The `warrant` command. Refusals print their code and sentence and exit with the code's exit status
 * (`EXIT` in exit-status.ts: 2 your input, 3 refused by policy, 4 upstream, 5 an incomplete answer); a bug exits 1.
 */
export async function main(argv: readonly string[]): Promise<number> {
  const program = warrantProgram()
  try {
    // Every invocation leaves an audit row (surface cli), refused or not, written before it answers.
    await auditedInvocation(
      program,
      async () => {
        await program.parseAsync(argv as string[], { from: 'node' })
      },
      // read-only: a refusal on a store this process cannot continue is still reported (its row then fails, said on stderr)
      async (config) => (await openAuditGateway({ config, readOnly: true })).gateway,
    )
    return 0
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2
    // the command stopped because it was interrupted: bin.ts said so and exits with the signal's status
    if (wasInterrupted()) return 1
    if (isWarrantError(error)) {
      process.stderr.write(`warrant: ${error.code}: ${error.message}\n`)
      return exitCodeOf(error.code)
    }
    // A bug, not the user's input: one line, and the stack only when asked for (WARRANT_DEBUG=1).
    const detail = error instanceof Error ? (process.env.WARRANT_DEBUG ? (error.stack ?? error.message) : error.message) : String(error)
    process.stderr.write(`warrant: internal error: ${detail}\n${process.env.WARRANT_DEBUG ? '' : '(this is a bug in Warrant; WARRANT_DEBUG=1 prints where it happened)\n'}`)
    return 1
  }
}

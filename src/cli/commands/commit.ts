import type { Command } from 'commander'
import { WarrantError } from '../../contract/index.js'
import { cliActor, TOKEN_OPTIONS, type TokenFlags } from '../cli-actor.js'
import { noteCliAnswer } from '../cli-audit.js'
import { openCliGateway } from '../open-cli-gateway.js'
import { createProgress } from '../progress.js'
import type { Gateway } from '../../gateway/index.js'
import type { OperationView } from '../../operations/index.js'
import type { Progress } from '../progress.js'
import { watchOperation } from '../watch-operation.js'
import { operationExitStatus, renderOperation } from './operation.js'

const DEFAULT_WAIT_MS = 60 * 60 * 1000

/**
 * `warrant commit PLAN_ID --key KEY --digest D [--wait]`. Without --wait the operation is recorded and
 * executed by a running `warrant serve` (or the next one to start); with --wait this process executes it
 * and prints the outcome, exiting 0 when every target succeeded, 3 when it finished otherwise, 5 when it was
 * still running as the wait ended (or was interrupted: see waitInterruptibly); progress goes to stderr.
 */
export function registerCommit(program: Command): void {
  program
    .command('commit <plan_id>')
    .description('commit an approved plan; the same --key always names the same operation')
    .requiredOption('--key <key>', 'idempotency key: reuse it only to retry exactly this commit')
    .option('--digest <plan_digest>', 'required: the plan digest the reviewer approved (refused with 409 if it differs)')
    .option('--wait', 'execute in this process and wait for the end, with progress on stderr; exit 0 if every target succeeded, 3 if it finished otherwise, 5 if still running at --timeout-ms')
    .option('--timeout-ms <n>', 'with --wait: give up waiting after this long (the operation goes on)', String(DEFAULT_WAIT_MS))
    .option('-c, --config <file>', 'config file')
    .option(...TOKEN_OPTIONS[0])
    .option(...TOKEN_OPTIONS[1])
    .option(...TOKEN_OPTIONS[2])
    .option('--json', 'print as JSON')
    .option('-q, --quiet', 'with --wait: no progress line on stderr')
    .action(async (planId: string, flags: TokenFlags & { key: string; digest?: string; wait?: boolean; timeoutMs: string; config?: string; json?: boolean; quiet?: boolean }, command: Command) => {
      // Checked here rather than by commander so that the refusal is the same invalid_request as on HTTP and MCP.
      if (flags.digest === undefined || flags.digest.trim() === '')
        throw new WarrantError('invalid_request', 'a commit needs --digest: the plan digest the reviewer approved', { field: '--digest' })
      // nothing waits without --wait: a bound given there would be ignored, and a script would believe it had one
      // (--quiet is left alone: without --wait there is no progress line, which is what it asks for)
      if (!flags.wait && command.getOptionValueSource('timeoutMs') !== 'default')
        throw new WarrantError('invalid_request', '--timeout-ms bounds the wait of --wait, and this commit does not wait: add --wait (it then runs here), or leave --timeout-ms out', { field: '--timeout-ms' })
      const timeoutMs = Number(flags.timeoutMs)
      if (!Number.isInteger(timeoutMs) || timeoutMs < 1) throw new WarrantError('invalid_request', `--timeout-ms must be a whole number above 0, not "${flags.timeoutMs}"`)
      const { gateway } = await openCliGateway({ config: flags.config, executors: flags.wait ? 'commits' : false })
      try {
        const actor = await cliActor(gateway, flags)
        const receipt = await gateway.operations.commitPlan(actor, planId, { idempotencyKey: flags.key, expectedDigest: flags.digest })
        noteCliAnswer({ operation_id: receipt.operation_id })
        const head = receipt.created
          ? `committed: operation ${receipt.operation_id}, ${receipt.target_count} target(s), status ${receipt.status}`
          : `this --key already names operation ${receipt.operation_id} (status ${receipt.status}); nothing new was committed`
        if (!flags.wait) {
          process.stdout.write(
            flags.json
              ? `${JSON.stringify(receipt, null, 2)}\n`
              : `${head}\nit runs in \`warrant serve\` (or the next gateway to start); follow it with: warrant operation show ${receipt.operation_id}\n`,
          )
          return
        }
        if (!flags.json) process.stdout.write(`${head}\n`)
        const view = await waitInterruptibly(gateway, receipt.operation_id, { timeoutMs, progress: createProgress({ quiet: flags.quiet }) })
        process.stdout.write(flags.json ? `${JSON.stringify(view, null, 2)}\n` : `${renderOperation(view)}\n`)
        process.exitCode = operationExitStatus(view)
      } finally {
        await gateway.close()
      }
    })
}

/**
 * The wait of `commit --wait`, which executes the operation in this process. Ctrl-C (or SIGTERM) stops it the way
 * `warrant serve` stops: the targets in flight are answered and recorded, the rest stay pending for the next
 * gateway, the lease is released. Killed outright instead, the in-flight targets would end `unknown` and the
 * lease would hold the operation until it expired. A second Ctrl-C exits at once (bin.ts).
 */
async function waitInterruptibly(gateway: Gateway, operationId: string, options: { readonly timeoutMs: number; readonly progress: Progress }): Promise<OperationView> {
  const interrupt = new AbortController()
  const stop = () => interrupt.abort()
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
  try {
    const view = await watchOperation(gateway, operationId, { ...options, signal: interrupt.signal })
    if (!interrupt.signal.aborted) return view
    process.stderr.write('warrant: interrupted: stopping after the targets in flight are answered (Ctrl-C again exits at once)\n')
    await gateway.operations.close()
    const stopped = await gateway.operations.waitFor(operationId, 1)
    process.stderr.write(`warrant: interrupted: the operation has not finished; its pending targets run in \`warrant serve\` (or the next gateway to start)\n`)
    return stopped
  } finally {
    process.off('SIGINT', stop)
    process.off('SIGTERM', stop)
  }
}

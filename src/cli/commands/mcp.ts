import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import type { Command } from 'commander'
import { WarrantError } from '../../contract/index.js'
import { ArgumentRefusals, StdioErrorTrail, createMcpServer, withoutDuplicateKeys } from '../../mcp/index.js'
import { tokenFrom } from '../cli-actor.js'
import { openCliGateway } from '../open-cli-gateway.js'

/** The token for the stdio server: `--token-file`, else `WARRANT_TOKEN`. Never a command-line argument (it would show in `ps`). */
export function readMcpToken(flags: { readonly tokenFile?: string }, env: NodeJS.ProcessEnv = process.env): string {
  const token = tokenFrom({ tokenFile: flags.tokenFile }, env)
  if (token) return token
  throw new WarrantError(
    'unauthenticated',
    flags.tokenFile
      ? `--token-file "${flags.tokenFile}" is empty`
      : 'set WARRANT_TOKEN to an agent token (warrant token create --name NAME --role agent ...), or pass --token-file FILE',
  )
}

export function registerMcp(program: Command): void {
  program
    .command('mcp')
    .description('serve the MCP tools over stdio for one agent token (WARRANT_TOKEN or --token-file); logs go to stderr, stdout carries only the protocol')
    .option('-c, --config <file>', 'config file (YAML or JSON); default: ./warrant.yaml, else the bundled demo')
    .option('--token-file <file>', 'read the bearer token from this file instead of WARRANT_TOKEN')
    .action(async (flags: { config?: string; tokenFile?: string }) => {
      // stdout is the protocol channel: anything that logs through console goes to stderr instead.
      for (const method of ['log', 'info', 'debug'] as const) console[method] = console.error
      const token = readMcpToken(flags)
      // From here on, before anything is opened: a signal at any point of the startup stops the server as one after
      // it connected does. One while the store opens (migrations, operations resumed) lets the opening finish,
      // then closes it, rather than cut it mid-way.
      const signal = firstSignal()
      const { gateway } = await openCliGateway({ config: flags.config, executors: true })
      let server: ReturnType<typeof createMcpServer> | null = null
      let trail: StdioErrorTrail | null = null
      let closing: Promise<void> | null = null
      const shutdown = () => (closing ??= (async () => {
        // stopped by a signal while the client keeps stdin open: no new call is read, and the stdin reader, the
        // one thing left keeping the process alive once the store is closed, is let go
        if (signal.received()) process.stdin.unpipe().destroy()
        exitAfterShutdown()
        await server?.close().catch(() => undefined)
        // closing aborts the calls in flight (a walk stops at it, a get_operation wait ends; those stdin's grace
        // left running): their rows are written before the store closes. Bounded: a tool that ignores the abort
        // does not hold a process asked to stop.
        await settledWithin(Promise.all([server?.settled(), trail?.settled()]), SHUTDOWN_MS)
        await gateway.close()
      })())
      try {
        if (signal.received()) return
        const authenticate = () =>
          gateway.principals.authenticate(token, 'mcp').catch((error: unknown) => {
            gateway.log.warn({ surface: 'mcp', transport: 'stdio', reason: (error as Error).message }, 'authentication failed')
            throw error
          })
        const actor = await signal.unless(authenticate())
        if (actor === STOPPED) return
        // Authenticated again on every tool call: revoking or expiring the token stops this server's tools at once.
        const argumentRefusals = new ArgumentRefusals()
        server = createMcpServer({ gateway, actor: authenticate, argumentRefusals })
        // a JSON-RPC error answered outside a tool is recorded refused, as /mcp's HTTP trail records it; a cancelled request client_closed
        trail = new StdioErrorTrail(gateway, actor)
        const lines = withoutDuplicateKeys(process.stdin, process.stdout, argumentRefusals, gateway.config.server.max_body_bytes, trail)
        const transport = new StdioServerTransport(lines, process.stdout)
        // each answer, and each cancellation as the SDK takes it
        trail.watch(transport)
        const closed = new Promise<void>((resolve) => {
          server!.server.onclose = resolve
          // stdin ended (the client's way to shut the server down): the calls it sent are answered first, within
          // a grace; what still runs then is cut as a signal cuts it, its row written, so that a client gone does
          // not hold the process for a walk's whole deadline. The end of the lines read from stdin, not of stdin,
          // so that the last line has reached the server.
          const ended = () => void settledWithin(server!.settled(), STDIN_GRACE_MS).then(resolve)
          lines.once('end', ended)
          process.stdin.once('close', ended)
        })
        if ((await signal.unless(server.connect(transport))) === STOPPED) return
        gateway.log.info({ principal: actor.principal, role: actor.role }, 'MCP server ready on stdio')
        await signal.unless(closed)
      } finally {
        await shutdown()
      }
    })
}

const STOPPED = Symbol('stopped by a signal')

/**
 * SIGINT or SIGTERM: a clean stop, exit 0 as `warrant serve`. The handlers go at the first signal, so that a second
 * one, during the shutdown, exits at once with the signal's status (bin.ts).
 */
function firstSignal() {
  let received = false
  let stop = () => {}
  const stopped = new Promise<typeof STOPPED>((resolve) => (stop = () => resolve(STOPPED)))
  const onSignal = () => {
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
    received = true
    exitAfterShutdown()
    stop()
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
  return {
    received: () => received,
    /** `work`, or STOPPED once a signal came first; a failure of `work` after that is the shutdown's to ignore. */
    unless<T>(work: Promise<T>): Promise<T | typeof STOPPED> {
      work.catch(() => undefined)
      return Promise.race([work, stopped])
    },
  }
}

/** How long a shutdown waits for the tool calls in flight, each aborted, to write their rows. */
const SHUTDOWN_MS = 5_000
/**
 * How long the calls in flight when stdin ends have to be answered on their own (`printf '…' | warrant mcp`): the
 * official client sends SIGTERM 2 s after closing stdin; a pipe has no one to, and a walk may have a deadline of hours.
 */
const STDIN_GRACE_MS = 10_000

/** Whatever still runs once the shutdown is done (an upstream request a tool left behind) ends with the process. */
function exitAfterShutdown(): void {
  setTimeout(() => process.exit(process.exitCode ?? 0), SHUTDOWN_MS * 2).unref()
}

async function settledWithin(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  await Promise.race([work, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))])
  clearTimeout(timer)
}

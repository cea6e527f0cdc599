import { AsyncLocalStorage } from 'node:async_hooks'
import type { Command } from 'commander'
import { REDACTED, isSecretKey } from '../audit/index.js'
import { type Actor, isWarrantError } from '../contract/index.js'
import type { Gateway } from '../gateway/index.js'

/** What one `warrant …` invocation did, gathered while it runs and recorded once it ends. */
interface Invocation {
  command: Command | null
  actor: Actor | null
  gateway: Gateway | null
  /** closes the gateway for real: the command's own close is deferred until the row is written */
  close: (() => Promise<void>) | null
  /** what the command decided, e.g. an approval: `{ decision, plan_digest, … }` */
  details: Record<string, unknown> | null
  /** the selection or plan the command made: its arguments name only the ones it was given */
  answered: Partial<Record<'plan_id' | 'selection_id' | 'operation_id', string>>
}

const current = new AsyncLocalStorage<Invocation>()

/** Commands that record nothing themselves: their requests are recorded by the surfaces they serve. */
const SERVING = new Set(['serve', 'mcp'])
const ID_PREFIXES: readonly [string, 'plan_id' | 'selection_id' | 'operation_id'][] = [
  ['plan_', 'plan_id'],
  ['sel_', 'selection_id'],
  ['op_', 'operation_id'],
]

/**
 * Runs one CLI invocation and writes its run-level audit row (surface `cli`) before the process answers:
 * who (the token's principal, or the local operator), which command, its arguments (secrets and denied
 * fields redacted), the outcome (`ok`, or `refused` with the code), and the plan, selection or operation it
 * named. A refusal before any gateway was opened (an approval without a token) still opens one to record it.
 * Recording never changes the command's outcome: a fault is reported on stderr.
 */
export async function auditedInvocation(program: Command, run: () => Promise<void>, openForAudit: (config: string | undefined) => Promise<Gateway>): Promise<void> {
  const invocation: Invocation = { command: null, actor: null, gateway: null, close: null, details: null, answered: {} }
  program.hook('preAction', (_root, action) => {
    invocation.command = action
  })
  let recorded: Promise<void> | null = null
  const recordOnce = (failure: unknown) =>
    (recorded ??= record(invocation, failure, openForAudit).catch((error: unknown) => {
      process.stderr.write(`warrant: the audit row of this command could not be written: ${(error as Error).message}\n`)
    }))
  // recorded now, before an early exit: a reader that stopped reading (the command answered), an interrupt, or a
  // command that never settled
  unfinished = (failure) => recordOnce(failure)
  let failure: unknown = null
  try {
    await current.run(invocation, run)
  } catch (error) {
    failure = error
  }
  try {
    await recordOnce(failure)
  } finally {
    unfinished = null
    await invocation.close?.().catch(() => undefined)
  }
  if (failure !== null) throw failure
}

let unfinished: ((failure: unknown) => Promise<void>) | null = null
/** The failure of a command stopped by Ctrl-C or SIGTERM: recorded as `interrupted`, neither ok nor refused. */
const INTERRUPTED = Symbol('interrupted')

/**
 * Writes the running command's audit row now, before the process exits early: a reader closed stdout
 * (`warrant search R --json | head`) and there is no one left to answer, the command was `interrupted`
 * (Ctrl-C), or it `failed` (it never settled: recorded as a bug, `internal`). Exiting without it left a command that
 * ran, exit status and all, out of the log.
 */
export async function recordBeforeEarlyExit(options: { readonly interrupted?: boolean; readonly failed?: Error } = {}): Promise<void> {
  await unfinished?.(options.interrupted === true ? INTERRUPTED : (options.failed ?? null))
}

async function record(invocation: Invocation, failure: unknown, openForAudit: (config: string | undefined) => Promise<Gateway>): Promise<void> {
  const command = invocation.command
  if (!command || SERVING.has(command.name())) return
  const options = command.opts() as Record<string, unknown>
  let gateway = invocation.gateway
  if (!gateway) {
    if (failure === null) return // a command that needs no gateway (help, a local check) changed nothing
    try {
      gateway = await openForAudit(typeof options.config === 'string' ? options.config : undefined)
    } catch {
      return // no config or store to record into: the refusal already said why
    }
    invocation.close = () => gateway!.close()
  }
  const ids: Record<string, string> = { ...invocation.answered }
  for (const arg of command.args) for (const [prefix, key] of ID_PREFIXES) if (typeof arg === 'string' && arg.startsWith(prefix)) ids[key] ??= arg
  const code = failure === null ? null : failure === INTERRUPTED ? 'interrupted' : isWarrantError(failure) ? failure.code : 'internal'
  const denied = new Set(Object.values(gateway.config.resources).flatMap((r) => r.denied_fields))
  await gateway.audit.record({
    actor: invocation.actor,
    surface: 'cli',
    action: `cli:${commandPath(command)}`,
    summary: { args: command.args, options: withTermsRedacted(options, denied), outcome: code === null ? 'ok' : code === 'interrupted' ? code : 'refused', ...(code === null || code === 'interrupted' ? {} : { error: code }) },
    ...ids,
    // only a command that succeeded carries what it decided: a refused approval is never an approval
    ...(code === null && invocation.details ? { details: invocation.details } : {}),
  })
  await gateway.audit.flush()
}

/**
 * The options naming a term each: a filter `FIELD OP VALUE`, an exclusion `RULE:FIELD OP VALUE`, an action parameter
 * `NAME=VALUE` (`warrant plan -p`; the HTTP trail keeps the same parameter as `NAME: "[redacted]"` where the name is a
 * secret's or a denied field's).
 */
const TERM_OPTIONS = { filter: false, exclude: true, param: false } as const
const TERM_FIELD = /^\s*[A-Za-z_][A-Za-z0-9_]*/
const TERM_OPERATOR = /^\s*(!=|<=|>=|=|<|>|~)?\s*/

/**
 * The options with the value of every term (filter, exclusion, action parameter) on a denied or secret field replaced by `[redacted]`, field and
 * operator kept. A term is one string (`notes=…`), so the log's redaction by key never sees the field's name, and
 * the value went in whole where the HTTP trail keeps `notes: "[redacted]"`. Terms that do not parse are redacted
 * the same way from their first name on: a refused term is still recorded.
 */
function withTermsRedacted(options: Record<string, unknown>, denied: ReadonlySet<string>): Record<string, unknown> {
  const out = { ...options }
  for (const [name, ruled] of Object.entries(TERM_OPTIONS)) {
    const terms = out[name]
    if (!Array.isArray(terms)) continue
    out[name] = terms.map((term: unknown) => {
      if (typeof term !== 'string') return term
      const colon = ruled ? term.indexOf(':') + 1 : 0
      const rest = term.slice(colon)
      const field = TERM_FIELD.exec(rest)?.[0]
      if (!field || (!denied.has(field.trim()) && !isSecretKey(field.trim()))) return term
      const operator = TERM_OPERATOR.exec(rest.slice(field.length))?.[0] ?? ''
      return `${term.slice(0, colon)}${field}${operator}${REDACTED}`
    })
  }
  return out
}

function commandPath(command: Command): string {
  const names: string[] = []
  for (let c: Command | null = command; c && c.parent; c = c.parent) names.unshift(c.name())
  return names.join(' ')
}

/**
 * Called by `openCliGateway`: the invocation records into this gateway, notes every principal it
 * authenticates, and closes it only after the row is written. Outside an invocation (tests, library use) the
 * gateway is returned as it is.
 */
export function adoptCliGateway(gateway: Gateway): Gateway {
  const invocation = current.getStore()
  // serve and mcp are recorded request by request by the surfaces they run; their gateway stays as it is
  if (!invocation || invocation.gateway || (invocation.command && SERVING.has(invocation.command.name()))) return gateway
  invocation.gateway = gateway
  invocation.close = () => gateway.close()
  const authenticate = gateway.principals.authenticate
  const principals = {
    ...gateway.principals,
    async authenticate(token: string | undefined, surface: Parameters<typeof authenticate>[1]) {
      const actor = await authenticate(token, surface)
      invocation.actor ??= actor
      return actor
    },
  }
  return { ...gateway, principals, close: async () => undefined }
}

/** Called by `cliActor` for the local operator, who is never authenticated by a token. */
export function noteCliActor(actor: Actor): void {
  const invocation = current.getStore()
  if (invocation) invocation.actor ??= actor
}

/** Called by a command that decided something (an approval), so its audit row says what. */
export function noteCliDetails(details: Record<string, unknown>): void {
  const invocation = current.getStore()
  if (invocation) invocation.details = details
}

/**
 * Called by a command that made a selection, plan or operation (`select`, `recover`, `plan`, `compensate`, `commit`), so its row names it
 * as the HTTP trail does: without it, `warrant audit query --plan` found nothing of the plan just proposed.
 */
export function noteCliAnswer(ids: Invocation['answered']): void {
  const invocation = current.getStore()
  if (invocation) invocation.answered = { ...invocation.answered, ...ids }
}

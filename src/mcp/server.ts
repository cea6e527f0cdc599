import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js'
import { z } from 'zod'
import { asWarrantError, fromZodError } from '../api/error-mapping.js'
import { inspectJson } from '../api/input-guard.js'
import { type Actor, WarrantError } from '../contract/index.js'
import type { Gateway } from '../gateway/index.js'
import type { ArgumentRefusals } from './argument-refusals.js'
import { auditToolCall, type ToolCancellation } from './audit.js'
import { toolInputSchema, toolOutputSchema } from './json-schema.js'
import { type ToolAnswer, type ToolRefusal, answer, refusal } from './results.js'
import { AGENT_RULES, type ToolContext, type ToolDefinition, type WalkTally } from './tool.js'
import { WARRANT_TOOLS } from './tools/index.js'

export interface McpServerOptions {
  readonly gateway: Gateway
  /**
   * Who is asking (surface `mcp`): the actor a request authenticated as, or a function that authenticates
   * again on every tool call, so a long-lived connection (stdio) stops working the moment its token is
   * revoked or expires.
   */
  readonly actor: Actor | (() => Promise<Actor>)
  /** Tool arguments the transport found unfaithful in the message's text (a key twice, a rounded number), by request id. */
  readonly argumentRefusals?: ArgumentRefusals
}

export const MCP_SERVER_INFO = { name: 'warrant', version: '0.1.0' } as const

const INSTRUCTIONS = [
  'Warrant stands between you and real APIs and databases. Reads come as envelopes that say whether they are complete; a bulk change runs only on a frozen selection, through a plan a human reviewer approves, committed with the digest and an idempotency key.',
  'The flow: list_resources → search → create_selection → read_selection → propose_change → (a person approves on the review page; no tool approves) → get_plan → commit_change → get_operation; propose_compensation to undo; propose_remainder to finish a halted one.',
  AGENT_RULES,
].join('\n')

/**
 * An MCP server for one authenticated principal. Each tool parses its arguments with the HTTP route's
 * request schema, calls the same service the route calls, and answers with the route's response body as
 * `structuredContent`; a refusal is an `isError` result whose structuredContent is the HTTP error body,
 * same code. No tool approves.
 *
 * @example const server = createMcpServer({ gateway, actor }); await server.connect(new StdioServerTransport())
 */
export function createMcpServer(options: McpServerOptions): WarrantMcpServer {
  const { gateway, actor } = options
  const server = new WarrantMcpServer(MCP_SERVER_INFO, { capabilities: { tools: {} }, instructions: INSTRUCTIONS })
  const who = typeof actor === 'function' ? actor : async () => actor
  const runners = new Map(WARRANT_TOOLS.map((tool) => [tool.name, register(server, tool, gateway, who, options.argumentRefusals)] as const))
  answerEveryCall(server, runners, gateway, who)
  // The SDK advertises `tools.listChanged: true` once a tool is registered; this server never sends
  // notifications/tools/list_changed (the tools are fixed before it connects), so it must not claim to.
  server.server.registerCapabilities({ tools: { listChanged: undefined } })
  return server
}

/** The first protocol version with `structuredContent` (and outputSchema). */
const STRUCTURED_SINCE = '2025-06-18'
/** The MCP specification: an HTTP request without MCP-Protocol-Version is assumed to be 2025-03-26. */
const HTTP_DEFAULT_VERSION = '2025-03-26'

/**
 * Remembers the protocol version this connection negotiated in `initialize`, for a long-lived transport
 * (stdio): the SDK's Server answers it but keeps no record. Over stateless HTTP each request carries it in
 * the MCP-Protocol-Version header instead.
 */
export class WarrantMcpServer extends McpServer {
  negotiated: string | null = null
  /** Set as the server closes: the SDK then aborts every call in flight, which is no client's cancel. */
  closing = false
  /** Tool calls not yet answered. */
  private readonly calls = new Set<Promise<unknown>>()

  /** The call, kept until it is answered: see {@link settled}. */
  track<T>(call: Promise<T>): Promise<T> {
    this.calls.add(call)
    void call.finally(() => this.calls.delete(call)).catch(() => undefined)
    return call
  }

  /**
   * Once every tool call received so far has its answer handed to the transport. A stdio client shuts the server
   * down by closing stdin, often straight after its last call (`printf '…' | warrant mcp`): closing the store then
   * cut those calls off, unanswered and unaudited, a selection left mid-walk.
   */
  async settled(): Promise<void> {
    for (;;) {
      // a message read just before may not have reached its handler yet, nor an answer its transport
      await new Promise((resolve) => setImmediate(resolve))
      if (this.calls.size === 0) return
      await Promise.allSettled([...this.calls])
    }
  }

  override async close(): Promise<void> {
    this.closing = true
    await super.close()
  }

  override async connect(transport: Transport): Promise<void> {
    const observed = new Proxy(transport, {
      set: (target, prop, value) => {
        // The Protocol installs its message handler by assignment: wrap it to see `initialize` go by.
        const handler = prop === 'onmessage' && typeof value === 'function' ? this.observing(value as NonNullable<Transport['onmessage']>) : value
        return Reflect.set(target, prop, handler)
      },
    })
    await super.connect(observed)
  }

  private observing(handler: NonNullable<Transport['onmessage']>): NonNullable<Transport['onmessage']> {
    return (message, extra) => {
      if ('method' in message && message.method === 'initialize' && 'id' in message) {
        const requested = (message.params as { protocolVersion?: unknown } | undefined)?.protocolVersion
        this.negotiated = typeof requested === 'string' && SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION
      }
      handler(message, extra)
    }
  }

  /** Whether this call's client knows `structuredContent`: its header (HTTP), else what it negotiated. */
  structuredFor(headers: Record<string, string | string[] | undefined> | undefined): boolean {
    const header = headers?.['mcp-protocol-version']
    const version = (typeof header === 'string' ? header : undefined) ?? this.negotiated ?? HTTP_DEFAULT_VERSION
    return version >= STRUCTURED_SINCE
  }
}

/** What a tool call runs with besides its arguments: the HTTP request's headers, when it came over HTTP. */
interface CallExtra {
  readonly requestId?: string | number
  readonly requestInfo?: { readonly headers?: Record<string, string | string[] | undefined> }
  /** The SDK's cancel for this call (RequestHandlerExtra.signal): `notifications/cancelled` naming it, or the connection closing. */
  readonly signal?: AbortSignal
}

type ToolRunner = (raw: unknown, extra: CallExtra) => Promise<ToolAnswer | ToolRefusal>

function register(server: WarrantMcpServer, tool: ToolDefinition, gateway: Gateway, who: () => Promise<Actor>, refusals?: ArgumentRefusals): ToolRunner {
  const run: ToolRunner = (raw, extra) =>
    audited(gateway, who, tool.name, raw, { signal: extra.signal, closing: () => server.closing }, async (context) => {
      // Arguments an LLM wrote as a list or a string: name them, rather than zod's "(root)"
      if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
        throw new WarrantError('invalid_request', `invalid ${tool.name} arguments: arguments must be a JSON object of named arguments, not ${raw === null ? 'null' : Array.isArray(raw) ? 'an array' : `a ${typeof raw}`}`, { field: 'arguments' })
      // what JSON.parse changed before the arguments got here: a key given twice, a rounded number
      const unfaithful = refusals?.take(extra.requestId, tool.name)
      if (unfaithful) throw unfaithful
      // The same door as HTTP (stdio has no other): NUL, lone surrogates, __proto__ keys, nesting depth
      inspectJson(raw, 'arguments')
      const parsed = tool.input.safeParse(raw)
      if (!parsed.success) throw fromZodError(parsed.error, `${tool.name} arguments`)
      const value = await tool.run(parsed.data, context)
      return answer(value as object, tool.summarize(value, parsed.data, context), { structured: server.structuredFor(extra.requestInfo?.headers) })
    })
  const registered = server.registerTool(
    tool.name,
    {
      title: tool.title,
      description: tool.description,
      inputSchema: toolInputSchema(tool.advertisedInput ?? tool.input),
      outputSchema: toolOutputSchema(),
      annotations: tool.annotations,
    },
    (raw, extra) => run(raw, extra),
  )
  // The SDK lists `execution: {taskSupport: "forbidden"}` for every tool, which is what its absence means.
  registered.execution = undefined
  return run
}

/**
 * One tool call, answered or refused, and its audit row either way. A call the client cancelled (`signal`) gets no
 * answer (the SDK drops it): its row says so, and whether its tool stopped early (the cancel's own failure, never a
 * refusal) or ran to its end; it is rethrown, which the SDK drops as it drops an answer.
 */
async function audited(gateway: Gateway, who: () => Promise<Actor>, name: string, raw: unknown, call: CallCancel, work: (context: ToolContext) => Promise<ToolAnswer>): Promise<ToolAnswer | ToolRefusal> {
  const { signal } = call
  let result: ToolAnswer | ToolRefusal | null
  let actor: Actor | null = null
  const walk: WalkTally = { walked: false, pages: 0, finished: false }
  try {
    actor = await who()
    result = await work({ gateway, actor, ...(signal ? { signal } : {}), walk })
  } catch (error) {
    // stopped by the cancel: not a refusal, and not counted as one
    if (signal?.aborted) result = null
    else {
      result = refusal(error, gateway.log, name)
      gateway.telemetry.add('warrant_refusals_total', { surface: 'mcp', code: asWarrantError(error)?.code ?? 'internal' })
    }
  }
  await auditToolCall(gateway, actor, name, raw, result, signal?.aborted ? cancellationOf(signal, walk, call.closing()) : undefined)
  if (result === null) throw signal!.reason
  return result
}

/** What may stop a call: the SDK's signal, and whether it fired because the server closed (a shutdown, not the client). */
interface CallCancel {
  readonly signal?: AbortSignal | undefined
  readonly closing: () => boolean
}

function cancellationOf(signal: AbortSignal, walk: WalkTally, closing: boolean): ToolCancellation {
  const reason: unknown = signal.reason
  return {
    by: closing ? 'server' : 'client',
    // the SDK aborts with the notification's reason, a string, or none (then an AbortError, as on the connection closing)
    ...(typeof reason === 'string' ? { reason } : {}),
    ...(walk.walked ? { walk: { pages_read: walk.pages, stopped_early: !walk.finished } } : {}),
  }
}

/**
 * tools/call with its params as sent. The SDK parses params itself first, and answers a caller's mistake there
 * as JSON-RPC -32603 "Internal error" (arguments that are not an object, a name that is not a string), or an
 * unknown tool as an error with no code and no audit row; keeping the params aside (the SDK's own check then
 * sees a well-formed call) lets every one of them be refused like a bad argument: a code, a message, a row.
 */
const ANY_TOOL_CALL = z.object({ method: z.literal('tools/call'), params: z.unknown().transform((sent) => ({ name: 'tools/call', sent })) })

/** A tool name as the MCP specification spells them: anything else is not put into an audit row's action. */
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/

function answerEveryCall(server: WarrantMcpServer, runners: ReadonlyMap<string, ToolRunner>, gateway: Gateway, who: () => Promise<Actor>): void {
  server.server.setRequestHandler(ANY_TOOL_CALL, (request, extra) => server.track(answerCall(request.params.sent, extra)))
  function answerCall(sent: unknown, extra: CallExtra): Promise<ToolAnswer | ToolRefusal> {
    const params = sent !== null && typeof sent === 'object' && !Array.isArray(sent) ? (sent as Record<string, unknown>) : {}
    const { name, arguments: raw = {} } = params
    const run = typeof name === 'string' ? runners.get(name) : undefined
    if (run) return run(raw, extra)
    return audited(gateway, who, typeof name === 'string' && TOOL_NAME.test(name) ? name : '(unknown tool)', raw, { closing: () => server.closing }, async () => {
      if (typeof name !== 'string') throw new WarrantError('invalid_request', 'invalid tools/call: name must be the name of a tool, as a string; tools/list lists them', { field: 'name' })
      throw new WarrantError('not_found', `no tool "${name.slice(0, 128)}"; the tools are: ${[...runners.keys()].join(', ')}. No tool approves: a person approves on the review page.`, { tool: name.slice(0, 128) })
    })
  }
}

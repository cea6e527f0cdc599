import { boundedSummary } from '../audit/index.js'
import type { Actor } from '../contract/index.js'
import type { Gateway } from '../gateway/index.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import { CancelledNotificationSchema, isTaskAugmentedRequestParams } from '@modelcontextprotocol/sdk/types.js'
import { jsonRpcErrorCode, jsonRpcErrorOf } from './json-rpc-errors.js'

const MAX_SUMMARY_BODY = 4096

/** A tool call records its own row (audit.ts): this trail adds none for its answer, as /mcp's adds none. */
const TOOL_CALL = 'tools/call'

interface Pending {
  readonly method: string
  readonly body: unknown
  /** another request was in flight under the same id while this one was */
  shared: boolean
  /** a tool call the SDK hands to its tool (not one asking for a task, which it refuses first: this server runs none) */
  readonly toolStarts: boolean
}

/**
 * stdio's share of what /mcp's HTTP trail records (src/api/audit-trail.ts), one row per message a tool does not
 * record, named `stdio:METHOD`, so a session leaves the same trail whatever its transport. A JSON-RPC error answered
 * outside a tool (an unknown method, a line that is not JSON or no JSON-RPC message, one naming a key twice, one too
 * long, a method that fails) is one refused row naming the method and the JSON-RPC code, read as refused by the one
 * rule (`isRefusal`). A request answered without an error (initialize, tools/list, ping) is one `ok` row, written
 * as its answer leaves; a message that gets no answer (a notification) is one `ok` row as it arrives, since HTTP
 * records each POST of one too (a client sends few: initialized, a cancellation). A tool call's answer adds
 * nothing. A request the client cancels (`notifications/cancelled` naming its id while it is in flight) gets no answer
 * (the SDK drops it): it is one `client_closed` row (the outcome of an answer the client left before it got), with
 * `cancelled: {by: "client", reason}`; a cancelled tool call's says `tool_started: true` (the SDK starts the tool
 * before it can see the cancellation: the tool's own `mcp:TOOL` row, written when it ends, says what it did: a walk
 * stops at the cancel, `client_closed` too with the pages it read; a commit already sent runs to its end), or `false` for a call asking for a task (refused before any tool), never a refusal. A cancellation naming no request in flight drops nothing. Recording
 * never fails the answer: a fault is logged.
 */
export class StdioErrorTrail {
  /**
   * Each request not yet answered, by id, oldest first: its method and the message, since an answer carries only the
   * id. A client may send a second request under an id still in flight (JSON-RPC forbids it; the SDK answers each):
   * each is kept, so each leaves its row, marked `id_in_flight_twice`.
   */
  private readonly requests = new Map<string | number, Pending[]>()
  private readonly writes = new Set<Promise<unknown>>()

  constructor(
    private readonly gateway: Gateway,
    private readonly actor: Actor | null,
  ) {}

  /** A message handed to the server: a request is kept until it is answered; anything else, answered by nothing, is recorded now. */
  received(message: unknown): void {
    const m = message as { id?: unknown; method?: unknown; params?: { task?: unknown } } | null
    const method = typeof m?.method === 'string' ? m.method : null
    if ((typeof m?.id === 'string' || typeof m?.id === 'number') && method !== null) {
      const pending = this.requests.get(m.id) ?? []
      // as the SDK reads a call asking for a task
      const task = isTaskAugmentedRequestParams(m.params) && Boolean(m.params?.task)
      pending.push({ method, body: boundedSummary(message, MAX_SUMMARY_BODY), shared: pending.length > 0, toolStarts: method === TOOL_CALL && !task })
      if (pending.length > 1) for (const p of pending) p.shared = true
      this.requests.set(m.id, pending)
    } else this.record(method, { outcome: 'ok', body: boundedSummary(message, MAX_SUMMARY_BODY) })
  }

  /**
   * Watch the transport: each answer as it is written, and each message as the SDK takes it (a cancellation is judged
   * there, in order with the answers: an answer the SDK sent before it saw the cancellation is the request's row).
   */
  watch(transport: Transport): void {
    const send = transport.send.bind(transport)
    transport.send = (message, options) => {
      this.answered(message)
      return send(message, options)
    }
    let deliver: Transport['onmessage']
    // the SDK's Protocol installs its handler by assignment, on connect
    Object.defineProperty(transport, 'onmessage', {
      configurable: true,
      get: () => deliver,
      set: (handler: Transport['onmessage']) => {
        deliver =
          handler &&
          ((message, extra) => {
            this.delivered(message)
            handler(message, extra)
          })
      },
    })
  }

  /**
   * A message the SDK takes now: a cancellation, as the SDK reads one (its schema; an id of 0 or "" cancels nothing),
   * naming a request still in flight ends that request's wait: the SDK will not answer it. Under an id two requests
   * share, the SDK cancels the newest.
   */
  delivered(message: unknown): void {
    const cancellation = CancelledNotificationSchema.safeParse(message)
    const id = cancellation.success ? cancellation.data.params.requestId : undefined
    if (!id) return
    const pending = this.requests.get(id)
    // answered already, or never asked: nothing in flight to drop
    if (pending === undefined) return
    const kept = pending.pop()!
    if (pending.length === 0) this.requests.delete(id)
    const reason = cancellation.data?.params.reason
    this.record(kept.method, {
      outcome: 'client_closed',
      cancelled: { by: 'client', ...(typeof reason === 'string' ? { reason: reason.slice(0, 500) } : {}) },
      body: kept.body,
      ...(kept.method === TOOL_CALL ? { tool_started: kept.toolStarts } : {}),
      ...(kept.shared ? { id_in_flight_twice: true } : {}),
    })
  }

  /** A message about to be written: an answer is recorded (an error always; a success unless a tool's), with the request it answers when the line held one. */
  answered(answer: unknown, request?: unknown): void {
    const a = answer as { id?: unknown; method?: unknown } | null
    // the server's own notification (or request): no answer to anything the client sent
    if (typeof a?.method === 'string') return
    const id = a?.id
    // a line refused before the server (`request` given) answers none it holds, even under an id one in flight has
    const kept = request === undefined && (typeof id === 'string' || typeof id === 'number') ? this.take(id, answer) : undefined
    const shared = kept?.shared ? { id_in_flight_twice: true } : {}
    const error = jsonRpcErrorOf(answer)
    if (error === undefined) {
      if (kept !== undefined && kept.method !== TOOL_CALL) this.record(kept.method, { outcome: 'ok', body: kept.body, ...shared })
      return
    }
    const named = (request as { method?: unknown } | null | undefined)?.method
    const requested = typeof named === 'string' ? named : (kept?.method ?? null)
    this.record(requested, {
      outcome: 'refused',
      error: jsonRpcErrorCode(error),
      json_rpc_error: { code: error.code, message: error.message },
      // the line refused, else the request the server failed (HTTP's row keeps its body too)
      ...(request !== undefined ? { body: boundedSummary(request, MAX_SUMMARY_BODY) } : kept !== undefined ? { body: kept.body } : {}),
      ...shared,
    })
  }

  /**
   * The request an answer under `id` answers. With several in flight under it, the id cannot tell: a tool call's
   * result (it holds `content`) answers the oldest tool call, any other answer the oldest other request (a tool call
   * whose tool ran is answered by its result, never an error: its row is the tool's, and an error taken for it left
   * a second row while the request that failed had none), else the oldest; each row then says its id was in flight
   * twice, so a reader knows the match was made so.
   */
  private take(id: string | number, answer: unknown): Pending | undefined {
    const pending = this.requests.get(id)
    if (pending === undefined) return undefined
    const result = (answer as { result?: unknown } | null)?.result
    const tool = result !== null && typeof result === 'object' && Array.isArray((result as { content?: unknown }).content)
    const at = Math.max(0, pending.findIndex((p) => (p.method === TOOL_CALL) === tool))
    const [kept] = pending.splice(at, 1)
    if (pending.length === 0) this.requests.delete(id)
    return kept
  }

  /** Once every row started so far is written: the store closes after. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.writes])
  }

  private record(method: string | null, summary: Record<string, unknown>): void {
    const write = this.gateway.audit
      .record({ actor: this.actor, surface: 'mcp', action: `stdio:${method ?? '(no method)'}`, summary: { transport: 'stdio', method, ...summary } })
      .catch((fault: unknown) => this.gateway.log.error({ err: fault, method }, 'audit trail: could not record a JSON-RPC message on stdio'))
    this.writes.add(write)
    void write.finally(() => this.writes.delete(write))
  }
}

import { boundedSummary } from '../audit/index.js'
import type { Actor } from '../contract/index.js'
import type { Gateway } from '../gateway/index.js'
import { jsonRpcErrorCode, jsonRpcErrorOf } from './json-rpc-errors.js'

const MAX_SUMMARY_BODY = 4096

/**
 * stdio's share of what /mcp's HTTP trail records (src/api/audit-trail.ts): a JSON-RPC error answered outside a
 * tool (an unknown method, a line that is not JSON or no JSON-RPC message, one naming a key twice, one too long, a
 * method that fails) is one refused row naming the method and the JSON-RPC code, read as refused by the one rule
 * (`isRefusal`). A tool call records its own row (audit.ts). Recording never fails the answer: a fault is logged.
 */
export class StdioErrorTrail {
  /** The method of each request not yet answered, by id: an error the SDK answers carries only the id. */
  private readonly methods = new Map<string | number, string>()
  private readonly writes = new Set<Promise<unknown>>()

  constructor(
    private readonly gateway: Gateway,
    private readonly actor: Actor | null,
  ) {}

  /** A message handed to the server: a request's method is kept until it is answered. */
  received(message: unknown): void {
    const m = message as { id?: unknown; method?: unknown } | null
    if ((typeof m?.id === 'string' || typeof m?.id === 'number') && typeof m.method === 'string') this.methods.set(m.id, m.method)
  }

  /** A message about to be written: an error answer is recorded, with the request it answers when the line held one. */
  answered(answer: unknown, request?: unknown): void {
    const id = (answer as { id?: unknown } | null)?.id
    const method = typeof id === 'string' || typeof id === 'number' ? this.methods.get(id) : undefined
    if (method !== undefined) this.methods.delete(id as string | number)
    const error = jsonRpcErrorOf(answer)
    if (error === undefined) return
    const named = (request as { method?: unknown } | null | undefined)?.method
    const requested = typeof named === 'string' ? named : (method ?? null)
    const write = this.gateway.audit
      .record({
        actor: this.actor,
        surface: 'mcp',
        action: `stdio:${requested ?? '(no method)'}`,
        summary: {
          transport: 'stdio',
          method: requested,
          outcome: 'refused',
          error: jsonRpcErrorCode(error),
          json_rpc_error: { code: error.code, message: error.message },
          ...(request === undefined ? {} : { body: boundedSummary(request, MAX_SUMMARY_BODY) }),
        },
      })
      .catch((fault: unknown) => this.gateway.log.error({ err: fault, method: requested }, 'audit trail: could not record a JSON-RPC error on stdio'))
    this.writes.add(write)
    void write.finally(() => this.writes.delete(write))
  }

  /** Once every row started so far is written: the store closes after. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.writes])
  }
}

import { CancelledNotificationSchema, JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js'
import type { WarrantError } from '../contract/index.js'

/** JSON-RPC 2.0 error codes the MCP surfaces answer with (-32000: the SDK server's own code for a body too large). */
export const JSON_RPC = { parseError: -32700, invalidRequest: -32600, invalidParams: -32602, serverError: -32000 } as const

/** What -32600 says on every MCP transport: what a JSON-RPC message is. */
export const NOT_JSON_RPC = 'Invalid Request: not a JSON-RPC 2.0 message (jsonrpc "2.0", a method with an id of string or number, or a result or error for one)'

/** A message's id when it is one a response may carry (a string or a number), else null. */
export function messageId(message: unknown): string | number | null {
  const id = (message as { id?: unknown } | null)?.id
  return typeof id === 'string' || typeof id === 'number' ? id : null
}

/** A JSON-RPC error response. */
export function jsonRpcError(id: unknown, code: number, message: string, data?: unknown) {
  return { jsonrpc: '2.0' as const, error: { code, message, ...(data === undefined ? {} : { data }) }, id: messageId({ id }) }
}

/** A Warrant refusal as a JSON-RPC error: its code and message in the message, its HTTP error body as data. */
export function jsonRpcRefusal(refusal: WarrantError, code: number, id: unknown = null) {
  return jsonRpcError(id, code, `${refusal.code}: ${refusal.message}`, refusal.toBody())
}

/**
 * Why a parsed body is no JSON-RPC message (or batch of them) the transport can take, or null: -32600, with the id of
 * the first bad message. An empty batch is one (JSON-RPC 2.0 answers it so; the SDK answered nothing, 202).
 */
export function notJsonRpc(body: unknown): ReturnType<typeof jsonRpcError> | null {
  if (Array.isArray(body) && body.length === 0) return jsonRpcError(null, JSON_RPC.invalidRequest, 'Invalid Request: an empty batch; send one JSON-RPC message, or an array of at least one')
  const bad = (Array.isArray(body) ? body : [body]).find((message) => !JSONRPCMessageSchema.safeParse(message).success)
  return bad === undefined ? null : jsonRpcError(messageId(bad), JSON_RPC.invalidRequest, NOT_JSON_RPC)
}

/**
 * Why a batch cannot be answered, or null: it carries a request and a `notifications/cancelled` naming it (as the SDK
 * reads one: an id of 0 or "" names nothing). The SDK drops a cancelled request's answer, and a JSON answer waits
 * for every request's, so the POST would hang for ever, unrecorded (a tool run all the same). -32600 naming the id.
 */
export function cancelsItsOwnRequest(body: unknown): ReturnType<typeof jsonRpcError> | null {
  if (!Array.isArray(body)) return null
  const requests = new Set(body.filter((m) => typeof (m as { method?: unknown } | null)?.method === 'string').map(messageId).filter((id) => id !== null))
  for (const message of body) {
    const cancellation = CancelledNotificationSchema.safeParse(message)
    const id = cancellation.success ? cancellation.data.params.requestId : undefined
    if (id && requests.has(id))
      return jsonRpcError(null, JSON_RPC.invalidRequest, `Invalid Request: the batch cancels a request it carries (id ${JSON.stringify(id).slice(0, 100)}); its answer could never be sent. Send the request alone, or not at all`)
  }
  return null
}

/** The first JSON-RPC error an answer holds (the answer, or one message of a batch's): its code, message and the Warrant refusal it carries. */
export function jsonRpcErrorOf(answer: unknown): { code: number; message: string; refusal?: string } | undefined {
  for (const message of Array.isArray(answer) ? answer : [answer]) {
    const error = (message !== null && typeof message === 'object' && !Array.isArray(message) ? (message as Record<string, unknown>).error : undefined) as
      | { code?: unknown; message?: unknown; data?: { error?: { code?: unknown } } }
      | undefined
    if (error && typeof error === 'object' && typeof error.code === 'number') {
      const refusal = error.data?.error?.code
      return { code: error.code, message: typeof error.message === 'string' ? error.message.slice(0, 500) : '', ...(typeof refusal === 'string' ? { refusal } : {}) }
    }
  }
  return undefined
}

const JSON_RPC_CODES: Readonly<Record<number, string>> = { [-32700]: 'parse_error', [-32600]: 'invalid_request', [-32601]: 'method_not_found', [-32602]: 'invalid_params', [-32603]: 'internal_error' }

/** A JSON-RPC error's code as an audit row's `error`: the Warrant refusal it carries as data, else the JSON-RPC code's name. */
export function jsonRpcErrorCode(error: { code: number; refusal?: string }): string {
  return error.refusal ?? JSON_RPC_CODES[error.code] ?? `json_rpc_${error.code}`
}

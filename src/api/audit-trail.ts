import type { Context, MiddlewareHandler } from 'hono'
import { routePath } from 'hono/route'
import { answerSummary, boundedSummary, type StreamEnd, withRequestAudit } from '../audit/index.js'
import { type Actor, isWarrantError } from '../contract/index.js'
import type { Gateway } from '../gateway/index.js'
import { MCP_PATH } from '../mcp/http-transport.js'
import { jsonRpcErrorCode, jsonRpcErrorOf } from '../mcp/json-rpc-errors.js'
import type { ApiEnv } from './authenticate.js'

const ID_KEYS = ['selection_id', 'plan_id', 'operation_id'] as const
const MAX_SUMMARY_BODY = 4096
const MAX_ANSWER_BYTES = 1_000_000

/**
 * The run-level audit trail of every request the app serves, on every surface it carries (the HTTP API, the
 * MCP endpoint, the review pages), refusals included: who called which route, with what (denied fields and
 * secrets redacted), the outcome (`ok`, or `refused` with the error code), and which selection, plan and
 * operation it touched. The row is written before the answer leaves. A surface that records the request
 * itself (an MCP tool call, a review-page action) marks it, and this trail then adds nothing. Recording never
 * fails the request: a logging fault is logged, and the caller still gets the service's answer.
 */
export function auditTrail(gateway: Gateway): MiddlewareHandler<ApiEnv> {
  return async (c, next) => {
    if (c.req.path === '/health') return next()
    // The value a route answers with, kept as it is handed to c.json: reading it back from the response would
    // parse the whole body again (a full search answers megabytes, and re-parsing it doubled the server's cost).
    let answered: { readonly value: unknown; readonly response: Response } | undefined
    const json = c.json as (...args: unknown[]) => Response
    c.json = ((...args: unknown[]) => {
      const response = json(...args)
      answered = { value: args[0], response }
      return response
    }) as typeof c.json
    // a streamed answer (a search's envelope) is recorded at its end, with how the walk ended (envelope-stream.ts)
    c.set('record_stream_end', (end) => record(end))
    const recorded = await withRequestAudit(next)
    if (c.get('streamed_answer')) return
    // a batch at /mcp whose tool calls recorded themselves may still hold a JSON-RPC error no tool saw: that one is this
    // trail's (only a batch's answer is read back here: a single call's is its tool's, and may be megabytes)
    if (recorded && !(c.req.path === MCP_PATH && Array.isArray(await requestBody(c)) && jsonRpcErrorOf(await responseJson(c.res)))) return
    await record()
    async function record(end?: StreamEnd): Promise<void> {
      try {
        const actor = c.get('actor') ?? (c.get('viewer' as never) as { actor?: Actor } | undefined)?.actor ?? null
        const route = routePath(c, -1)
        const body = await requestBody(c)
        const answer = answered !== undefined && answered.response === c.res ? answered.value : end !== undefined ? undefined : await responseJson(c.res)
        const ids: Record<string, string | undefined> = {}
        // Only a string is an id: a refused body may carry anything under these keys (an array, a number).
        for (const key of ID_KEYS) {
          const value = pick(answer, key) ?? pick(body, key)
          ids[key] = typeof value === 'string' ? value : undefined
        }
        const param = pathParam(route, c.req.path, 'id')
        if (param) {
          const kind = route.startsWith('/v1/selections') ? 'selection_id' : route.startsWith('/v1/plans') ? 'plan_id' : route.startsWith('/v1/operations') ? 'operation_id' : null
          if (kind) ids[kind] ??= param
        }
        const status = c.res.status
        // a JSON-RPC error answered at 200 (an unknown method, one message of a batch) never reached a tool: a refusal too
        const rpcError = c.req.path === MCP_PATH ? jsonRpcErrorOf(answer) : undefined
        const refused = status >= 400 || rpcError !== undefined
        const code = status >= 400 || !rpcError ? errorCode(c, answer) : jsonRpcErrorCode(rpcError)
        const decision = route.endsWith('/approvals') && body && typeof body === 'object' ? (body as Record<string, unknown>).decision : undefined
        await gateway.audit.record({
          actor,
          surface: c.req.path === MCP_PATH ? 'mcp' : c.req.path.startsWith('/review') ? 'ui' : 'http',
          action: `${c.req.method} ${route}`,
          summary: {
            status,
            path: c.req.path,
            outcome: refused ? 'refused' : (end?.outcome ?? 'ok'),
            ...(refused ? { error: code } : {}),
            ...(rpcError ? { json_rpc_error: { code: rpcError.code, message: rpcError.message } } : {}),
            ...(body !== undefined ? { body: boundedSummary(body, MAX_SUMMARY_BODY) } : {}),
            // a refused approval attempt is a refusal, never an approval: it carries no `decision`
            ...(refused && decision !== undefined ? { refused_decision: decision } : {}),
            // what a listing answered (the same summary an MCP tool call's row keeps)
            ...answerSummary(end ?? answer),
            ...(end?.stopped ? { stopped: end.stopped } : {}),
            ...(end?.manifest ? { manifest: end.manifest } : {}),
            ...(typeof end?.started_seq === 'number' ? { started_seq: end.started_seq } : {}),
          },
          selection_id: ids.selection_id as string | undefined,
          plan_id: ids.plan_id as string | undefined,
          operation_id: ids.operation_id as string | undefined,
          details: refused ? undefined : decision !== undefined ? { decision, decided_by: actor?.principal, comment: (body as Record<string, unknown>).comment ?? null } : c.get('audit_details'),
        })
      } catch (error) {
        gateway.log.error({ err: error, path: c.req.path }, 'audit trail: could not record the request')
      }
    }
  }
}

/** The refusal's code: the error the app answered with, else the JSON error body's (or its JSON-RPC data's), else the status's class. */
function errorCode(c: Context, answer: unknown): string {
  const error = (c as { error?: unknown }).error
  if (isWarrantError(error)) return error.code
  const answered = pick(answer, 'error') as { code?: unknown; data?: { error?: { code?: unknown } } } | undefined
  if (typeof answered?.code === 'string') return answered.code
  // a JSON-RPC error at /mcp: its code is a number, the refusal's own is in its data (the HTTP error body)
  if (typeof answered?.data?.error?.code === 'string') return answered.data.error.code
  return c.res.status >= 500 ? 'internal' : c.res.status === 404 ? 'not_found' : `http_${c.res.status}`
}

/** The body as the route parsed it (hono caches it), or a note that it was not JSON. */
async function requestBody(c: Context): Promise<unknown> {
  if (c.req.method === 'GET' || c.req.method === 'HEAD') return undefined
  // A body refused for its size is never read here either: its declared length is what the row keeps
  if (c.res.status === 413) return { refused_body_bytes: Number(c.req.header('content-length') ?? 0) || null }
  if (c.req.header('content-type')?.includes('application/x-www-form-urlencoded')) {
    try {
      return await c.req.parseBody()
    } catch {
      return undefined
    }
  }
  try {
    return await c.req.json()
  } catch {
    const text = await c.req.text().catch(() => '')
    return text ? { unparsable_body_bytes: text.length } : undefined
  }
}

/**
 * A JSON answer not made by c.json, read back from a clone: at most MAX_ANSWER_BYTES, since only its top-level
 * ids and error code are kept (a longer answer is a listing, whose ids are in its path).
 */
async function responseJson(response: Response): Promise<unknown> {
  if (!response.headers.get('content-type')?.includes('application/json')) return undefined
  if (Number(response.headers.get('content-length') ?? 0) > MAX_ANSWER_BYTES) return undefined
  const reader = response.clone().body?.getReader()
  if (!reader) return undefined
  try {
    const chunks: Uint8Array[] = []
    let size = 0
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      size += value.byteLength
      if (size > MAX_ANSWER_BYTES) {
        await reader.cancel()
        return undefined
      }
      chunks.push(value)
    }
    return JSON.parse(Buffer.concat(chunks).toString('utf8'))
  } catch {
    return undefined
  }
}

function pick(value: unknown, key: string): any {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>)[key] : undefined
}


/** A named parameter of the matched route, read from the path (the middleware runs outside the route). */
function pathParam(route: string, path: string, name: string): string | undefined {
  const at = route.split('/').indexOf(`:${name}`)
  const value = at < 0 ? undefined : path.split('/')[at]
  if (!value) return undefined
  try {
    return decodeURIComponent(value)
  } catch {
    return value
  }
}

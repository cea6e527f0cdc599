import { randomUUID } from 'node:crypto'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { asWarrantError } from '../api/error-mapping.js'
import { type ErrorBody, type ErrorCode, revealed, WarrantError } from '../contract/index.js'
import type { Logger } from '../gateway/index.js'

/**
 * The object exactly as the HTTP API puts it on the wire: JSON-serialised and parsed back, so `undefined`
 * fields vanish and dates become strings whichever transport carries it (InMemoryTransport does not
 * serialise).
 */
export function asWire<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T
}

/** A tool's answer: not an error, its structuredContent the HTTP response body. */
export type ToolAnswer = CallToolResult & { readonly isError?: false; structuredContent: Record<string, unknown> }
/** A refusal: its structuredContent is the HTTP error body, so it always carries the refusal's code. */
export type ToolRefusal = CallToolResult & { readonly isError: true; structuredContent: ErrorBody & Record<string, unknown> }

/** Up to this many bytes, the answer's JSON is repeated in the text as well: cheap, and text-only hosts keep working. */
export const INLINE_JSON_MAX_BYTES = 4096

/**
 * A tool's answer: `structuredContent` is the HTTP response body; the first text block is the summary
 * (completeness first); the second is the body as JSON, for clients that read text only.
 *
 * Why the second block is not always a copy: the MCP specification (2025-06-18 on) says a tool with an
 * outputSchema MUST return `structuredContent`, and only SHOULD repeat it as JSON text "for backwards
 * compatibility". A client on an older protocol (`structured: false`) has no structuredContent, so it gets the
 * whole JSON. A current client gets the whole JSON only when it is small (INLINE_JSON_MAX_BYTES); a larger
 * answer's text leaves out its largest lists (`omitted_from_text` names them and their lengths) and keeps
 * everything else: completeness, reasons, continuation cursor, ids and digests. An agent's context then pays
 * for a large result once, not twice.
 */
export function answer(value: object, summary: string, options: { readonly structured: boolean }): ToolAnswer {
  const body = asWire(value) as Record<string, unknown>
  return { structuredContent: body, content: [{ type: 'text', text: summary }, { type: 'text', text: textCopy(body, options.structured) }] }
}

function textCopy(body: Record<string, unknown>, structured: boolean): string {
  const whole = JSON.stringify(body)
  if (!structured || Buffer.byteLength(whole) <= INLINE_JSON_MAX_BYTES) return whole
  const lists = Object.entries(body)
    .filter(([, v]) => Array.isArray(v))
    .map(([key, v]) => ({ key, length: (v as unknown[]).length, bytes: Buffer.byteLength(JSON.stringify(v)) }))
    .sort((a, b) => b.bytes - a.bytes)
  const kept: Record<string, unknown> = { ...body }
  const omitted: Record<string, string> = {}
  for (const list of lists) {
    if (Buffer.byteLength(JSON.stringify(kept)) <= INLINE_JSON_MAX_BYTES) break
    delete kept[list.key]
    omitted[list.key] = `${list.length} entries, in structuredContent`
  }
  return JSON.stringify({ ...kept, omitted_from_text: omitted })
}

/** What the agent can do about each refusal. */
const NEXT_STEP: Record<ErrorCode, string> = {
  invalid_request: 'Fix the arguments named in error.details and call again; do not guess values you were not given.',
  denied_field: 'That field never leaves the gateway. Use only the review_fields list_resources shows, and do not filter on a denied field.',
  invalid_cursor: 'Use a continuation cursor exactly as an earlier result gave it, with the same query, or start the search again without one. Never build or edit a cursor.',
  idempotency_key_missing: 'Call again with an idempotency_key you generate once for this commit and reuse only to retry the same commit.',
  unauthenticated: 'The token is missing, unknown, expired or revoked, or its principal was disabled (error.details.reason principal_disabled: a person stopped this agent on purpose). Stop and tell the person running this agent; do not retry or look for another token.',
  forbidden: 'This is outside your role or token scope. Tell the person; an agent cannot widen its own scope or approve.',
  not_approved: 'The plan needs a reviewer\'s approval first. Give the person the review URL (get_plan shows it), show the incomplete_reasons if any, and wait; check with get_plan. You cannot approve.',
  not_found: 'Check the id or name. list_resources names the resources; ids come only from earlier results.',
  method_not_allowed: 'That path takes other methods (error.details.allowed); MCP tools call the right one for you.',
  digest_mismatch: 'The selection or plan is not the one you named. Read it again (read_selection or get_plan) and use its current digest, or create a new selection; never reuse a digest from another object.',
  selection_incomplete: 'This selection\'s inventory was incomplete, so it can be reviewed but never committed. Show its incomplete_reasons; to act on the records it did return, create a new selection with filter {"id": {"in": [...those ids]}} (complete once its walk reads every one of them) and propose again.',
  idempotency_in_progress: 'The request with this key is still running. A commit: poll get_operation with the operation id instead of committing again. A selection: call create_selection again with the same arguments and key after a while; it answers once that selection is frozen.',
  conflict: 'The object is not in a state that allows this (for example already committed or rejected). Read it again with get_plan or get_operation.',
  expired: 'The selection or approval has expired. Create a new selection, propose the change again and ask for a new approval.',
  payload_too_large: 'The request is larger (or deeper) than the gateway accepts. Send less: narrower filters, fewer ids per call.',
  unsupported_media_type: 'The request body is declared in a charset other than UTF-8. Send it as UTF-8 JSON.',
  headers_too_large: 'The request line and headers are larger than the gateway reads. Send a shorter request.',
  idempotency_key_reused: 'That idempotency key was used for a different request. Use a new key for a new commit or selection; reuse a key only to retry exactly the same call.',
  rate_limited: 'Too many attempts. Wait for details.retry_after_seconds before trying again.',
  upstream_unavailable: 'The upstream system could not be reached. Tell the person; retry later. Nothing was assumed about the records.',
  store_unavailable: "The gateway's own store cannot be used now; error.message says why (its SQLite file removed or replaced: the gateway must be restarted on the right file; busy or unreachable: it may clear). Tell the person; once the gateway's /health is ok again, read the object again (get_plan, get_operation) before retrying: do not assume this call took effect.",
  internal: 'A bug in the gateway; it was logged with error.details.error_id. Tell the person and do not retry blindly.',
}

/** The refusal text: code first, then what happened and what to do next. */
export function refusalText(body: ErrorBody): string {
  const { code, message } = body.error
  return `REFUSED (${code}): ${revealed(message)}\nNext: ${NEXT_STEP[code] ?? NEXT_STEP.internal}`
}

/**
 * A refusal as an `isError` result whose structuredContent is exactly the HTTP error body, with the same
 * code. Anything that is not a WarrantError (or a zod/HTTP input failure) is a bug: logged with an id and
 * answered `internal`, never blamed on the caller.
 */
export function refusal(error: unknown, log: Logger, tool: string): ToolRefusal {
  const known = asWarrantError(error)
  let body: ErrorBody
  if (known) body = known.toBody()
  else {
    const id = randomUUID()
    log.error({ err: error, error_id: id, tool }, 'internal error in an MCP tool')
    body = new WarrantError('internal', `internal error ${id}; it was logged`, { error_id: id }).toBody()
  }
  const wire = asWire(body)
  return {
    isError: true,
    structuredContent: wire as ErrorBody & Record<string, unknown>,
    // An error body is small: both blocks, whatever the protocol.
    content: [
      { type: 'text', text: refusalText(wire) },
      { type: 'text', text: JSON.stringify(wire) },
    ],
  }
}

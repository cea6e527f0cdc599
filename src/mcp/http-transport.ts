import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import type { Hono } from 'hono'
import { type ApiEnv, authenticate } from '../api/authenticate.js'
import { WarrantError, decodeUtf8Marking, isWarrantError } from '../contract/index.js'
import type { Gateway } from '../gateway/index.js'
import { ArgumentRefusals } from './argument-refusals.js'
import { createMcpServer } from './server.js'
import { unfaithfulMessage } from './faithful-message.js'
import { JSON_RPC, cancelsItsOwnRequest, jsonRpcError, jsonRpcRefusal, notJsonRpc } from './json-rpc-errors.js'

export const MCP_PATH = '/mcp'

/**
 * Streamable HTTP at `/mcp`, stateless: every POST carries its bearer token, is authenticated with the same
 * principals (surface `mcp`) and rate limit as /v1, and gets a fresh server and transport that answer it
 * with JSON and are closed after. No session is kept, so any gateway instance can answer any request.
 * GET (a server-initiated event stream) and DELETE (ending a session) have nothing to serve: 405.
 *
 * @example registerMcpEndpoint(app, gateway) // in createApp
 */
export function registerMcpEndpoint(app: Hono<ApiEnv>, gateway: Gateway): void {
  const auth = authenticate(gateway, 'mcp')
  app.use(MCP_PATH, async (c, next) => {
    // The MCP specification: an HTTP transport validates Origin, so a web page cannot drive a local gateway
    // through the browser (DNS rebinding). No Origin (a non-browser client) passes; a foreign one is 403.
    const origin = c.req.header('origin')
    if (origin !== undefined && !originAllowed(origin, gateway))
      throw new WarrantError('forbidden', `Origin "${origin}" may not call ${MCP_PATH}; allow it in server.allowed_origins`, { origin })
    try {
      await auth(c, next)
    } catch (error) {
      // RFC 6750 / MCP authorization: a 401 names the scheme it wants.
      if (isWarrantError(error) && error.code === 'unauthenticated') c.header('WWW-Authenticate', 'Bearer realm="warrant"')
      throw error
    }
  })
  app.post(MCP_PATH, async (c) => {
    const argumentRefusals = new ArgumentRefusals()
    const server = createMcpServer({ gateway, actor: c.get('actor'), argumentRefusals })
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
    try {
      // Read here (not by the transport) to refuse a key given twice, which JSON.parse would reduce to the last,
      // and a number it would round; a byte that is not UTF-8 is kept as a lone surrogate, refused where it lies
      // (an argument's as an isError result), never read as U+FFFD
      const text = decodeUtf8Marking(new Uint8Array(await c.req.arrayBuffer())).text
      let parsedBody: unknown
      try {
        parsedBody = JSON.parse(text)
      } catch {
        return c.json(jsonRpcError(null, JSON_RPC.parseError, 'Parse error: the body is not JSON'), 400)
      }
      // a key given twice, a rounded number, too deep, bad text: -32600 in the message's own members, -32602 in its params
      const unfaithful = unfaithfulMessage(text, parsedBody, 'body', argumentRefusals)
      if (unfaithful) return c.json(unfaithful, 400)
      // The SDK calls JSON that is no JSON-RPC message a parse error (-32700; it parsed) and takes an empty batch (202);
      // a batch cancelling its own request would wait for that request's answer for ever
      const invalid = notJsonRpc(parsedBody) ?? cancelsItsOwnRequest(parsedBody)
      if (invalid) return c.json(invalid, 400)
      await server.connect(transport)
      return await transport.handleRequest(c.req.raw, { parsedBody })
    } finally {
      await server.close().catch((error: unknown) => gateway.log.warn({ err: error }, 'MCP: closing a request server failed'))
    }
  })
  app.on(['GET', 'DELETE'], MCP_PATH, (c) =>
    c.json({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this MCP endpoint is stateless; send JSON-RPC with POST' }, id: null }, 405, { Allow: 'POST' }),
  )
}

/**
 * The door's refusals at /mcp (a body over server.max_body_bytes, a NUL byte in the path or query), said as the
 * transport says a refusal: a JSON-RPC error (no id: the body was not read), the HTTP error body as its data.
 */
export function mcpDoorRefusal(refusal: WarrantError): unknown {
  return jsonRpcRefusal(refusal, refusal.code === 'payload_too_large' ? JSON_RPC.serverError : JSON_RPC.invalidRequest)
}

/**
 * Pages served from loopback or the configured host, `server.public_url`'s origin, and
 * `server.allowed_origins`. Never "whatever the Host header says": under DNS rebinding the Host is the
 * attacker's name too.
 */
function originAllowed(origin: string, gateway: Gateway): boolean {
  let url: URL
  try {
    url = new URL(origin)
  } catch {
    return false
  }
  const server = gateway.config.server
  if (['localhost', '127.0.0.1', '[::1]', server.host].includes(url.hostname)) return true
  const normal = url.origin
  const allowed = new Set<string>()
  if (server.public_url) allowed.add(new URL(server.public_url).origin)
  for (const o of server.allowed_origins ?? []) {
    try {
      allowed.add(new URL(o).origin)
    } catch {
      // a malformed entry allows nothing
    }
  }
  return allowed.has(normal)
}

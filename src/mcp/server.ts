import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { asWarrantError, fromZodError } from '../api/error-mapping.js'
import { inspectJson } from '../api/input-guard.js'
import type { Actor } from '../contract/index.js'
import type { Gateway } from '../gateway/index.js'
import { auditToolCall } from './audit.js'
import { toolInputSchema, toolOutputSchema } from './json-schema.js'
import { type ToolAnswer, type ToolRefusal, answer, refusal } from './results.js'
import { AGENT_RULES, type ToolContext, type ToolDefinition } from './tool.js'
import { WARRANT_TOOLS } from './tools/index.js'

export interface McpServerOptions {
  readonly gateway: Gateway
  /**
   * Who is asking (surface `mcp`): the actor a request authenticated as, or a function that authenticates
   * again on every tool call, so a long-lived connection (stdio) stops working the moment its token is
   * revoked or expires.
   */
  readonly actor: Actor | (() => Promise<Actor>)
}

export const MCP_SERVER_INFO = { name: 'warrant', version: '0.1.0' } as const

const INSTRUCTIONS = [
  'Warrant stands between you and real APIs and databases. Reads come as envelopes that say whether they are complete; a bulk change runs only on a frozen selection, through a plan a human reviewer approves, committed with the digest and an idempotency key.',
  'The flow: list_resources → search → create_selection → read_selection → propose_change → (a person approves on the review page; no tool approves) → get_plan → commit_change → get_operation; propose_compensation to undo.',
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
export function createMcpServer(options: McpServerOptions): McpServer {
  const { gateway, actor } = options
  const server = new McpServer(MCP_SERVER_INFO, { capabilities: { tools: {} }, instructions: INSTRUCTIONS })
  const who = typeof actor === 'function' ? actor : async () => actor
  for (const tool of WARRANT_TOOLS) register(server, tool, gateway, who)
  return server
}

function register(server: McpServer, tool: ToolDefinition, gateway: Gateway, who: () => Promise<Actor>): void {
  server.registerTool(
    tool.name,
    {
      title: tool.title,
      description: tool.description,
      inputSchema: toolInputSchema(tool.advertisedInput ?? tool.input),
      outputSchema: toolOutputSchema(tool.output),
      annotations: tool.annotations,
    },
    async (raw) => {
      let result: ToolAnswer | ToolRefusal
      let actor: Actor | null = null
      try {
        actor = await who()
        const context: ToolContext = { gateway, actor }
        // The same door as HTTP (stdio has no other): NUL, lone surrogates, __proto__ keys, nesting depth
        inspectJson(raw, 'arguments')
        const parsed = tool.input.safeParse(raw)
        if (!parsed.success) throw fromZodError(parsed.error, `${tool.name} arguments`)
        const value = await tool.run(parsed.data, context)
        result = answer(value as object, tool.summarize(value, parsed.data, context))
      } catch (error) {
        result = refusal(error, gateway.log, tool.name)
        gateway.telemetry.add('warrant_refusals_total', { surface: 'mcp', code: asWarrantError(error)?.code ?? 'internal' })
      }
      await auditToolCall(gateway, actor, tool.name, raw, result)
      return result
    },
  )
}


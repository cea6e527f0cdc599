import { z } from 'zod'

type JsonSchema = Record<string, unknown>

/** The dialect the SDK 1.x emits and its client's default validator (Ajv, draft-07) compiles. */
const TARGET = 'draft-07' as const
const DIALECT_URI = 'http://json-schema.org/draft-07/schema#'

function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  return z.toJSONSchema(schema, { target: TARGET, io, unrepresentable: 'any' }) as JsonSchema
}

/**
 * A zod object whose JSON Schema (what `tools/list` shows) is `jsonSchema`, but which accepts any object when
 * the SDK parses with it. zod merges `.meta()` into the JSON Schema it generates, so the SDK's own
 * conversion emits exactly `jsonSchema`.
 *
 * Why: the SDK answers a schema failure with a text-only error, and an error result's structuredContent
 * must still fit the advertised outputSchema. Warrant parses arguments itself (a failure is an
 * `invalid_request` with the same `{error}` body as HTTP) and advertises a result schema that admits both
 * the answer and that error body.
 */
function advertising(jsonSchema: JsonSchema) {
  const { $schema: _dialect, ...rest } = jsonSchema
  // Keys set to undefined vanish from the JSON: the loose object's own `properties: {}` and
  // `additionalProperties: {}` are not advertised unless `jsonSchema` has them, and the dialect is named
  // only where it matters (`definitions` and `#/definitions/` refs are draft-07's; the rest reads the same
  // in any dialect): each `$schema` costs an agent ~50 bytes of context.
  return z.looseObject({}).meta({ properties: undefined, additionalProperties: undefined, ...rest, $schema: rest.definitions ? DIALECT_URI : undefined })
}

/** Built once per schema: a stateless HTTP request builds a server, and its tools, every time. */
const inputs = new WeakMap<z.ZodType, z.ZodObject>()

/** The advertised input schema: exactly the request schema the HTTP route parses with. */
export function toolInputSchema(request: z.ZodObject) {
  let advertised = inputs.get(request)
  if (!advertised) {
    const json = jsonSchemaOf(request, 'input')
    if (json.type !== 'object') throw new Error('a tool input schema must be a JSON object schema')
    inputs.set(request, (advertised = advertising(json)))
  }
  return advertised
}

/**
 * The advertised output schema of every tool: `{type: "object"}`, the answer's root only.
 *
 * Why not the answer's schema: `tools/list` is read into an agent's context before its first call, and the
 * nine answers' full schemas (nested, described, each with the error body) made it 84 KB; even their
 * top-level shapes cost 10 KB of a 16 KB budget. An outputSchema is still advertised because the MCP
 * specification ties `structuredContent` to it: with one, structuredContent is the data (always an object:
 * the HTTP answer or the HTTP error body) and the text blocks are for backwards compatibility. The shapes
 * themselves are the HTTP API's, published in full in the OpenAPI document (GET /openapi.json), and each
 * answer's summary says what it holds.
 */
export function toolOutputSchema() {
  return (output ??= advertising({ type: 'object' }))
}
let output: z.ZodObject | undefined

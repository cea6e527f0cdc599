import { z } from 'zod'
import { errorBodySchema } from '../api/error-mapping.js'

type JsonSchema = Record<string, unknown>

/** The dialect the SDK 1.x emits and its client's default validator (Ajv, draft-07) compiles. */
const TARGET = 'draft-07' as const

function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  return z.toJSONSchema(schema, { target: TARGET, io, unrepresentable: 'any' }) as JsonSchema
}

/**
 * Splits a generated schema into its body and its `definitions`, so several schemas can share one root.
 * A root that zod extracted into `definitions` (it had `.meta({id})`) comes back as a `$ref`.
 */
function split(schema: JsonSchema): { body: JsonSchema; definitions: Record<string, JsonSchema> } {
  const { $schema: _dialect, definitions, ...body } = schema
  return { body, definitions: (definitions ?? {}) as Record<string, JsonSchema> }
}

function mergeDefinitions(...sets: Record<string, JsonSchema>[]): Record<string, JsonSchema> {
  const merged: Record<string, JsonSchema> = {}
  for (const set of sets)
    for (const [name, schema] of Object.entries(set)) {
      if (name in merged && JSON.stringify(merged[name]) !== JSON.stringify(schema)) throw new Error(`two different schemas are both named "${name}"`)
      merged[name] = schema
    }
  return merged
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
  return z.looseObject({}).meta(rest)
}

/** Built once per schema: a stateless HTTP request builds a server, and its tools, every time. */
const inputs = new WeakMap<z.ZodType, z.ZodObject>()
const outputs = new WeakMap<z.ZodType, z.ZodObject>()

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
 * The advertised output schema: the HTTP answer, or the HTTP error body (`{error: {code, message,
 * details}}`) of a refusal. The root is `type: object` (MCP requires it) with `anyOf` the two shapes.
 */
export function toolOutputSchema(answer: z.ZodType) {
  let advertised = outputs.get(answer)
  if (!advertised) {
    const ok = split(jsonSchemaOf(answer, 'output'))
    const refused = split(jsonSchemaOf(errorBodySchema, 'output'))
    advertised = advertising({
      type: 'object',
      anyOf: [ok.body, refused.body],
      definitions: mergeDefinitions(ok.definitions, refused.definitions),
    })
    outputs.set(answer, advertised)
  }
  return advertised
}

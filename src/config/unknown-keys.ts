import type { z } from 'zod'

// A key the schema does not know is most often a typo ("concurency") or a YAML merge key ("<<"): the message
// says which key to write instead, from the keys allowed at that place, so the engineer need not read the docs.

type Def = { type: string; shape?: Record<string, z.ZodType>; innerType?: z.ZodType; in?: z.ZodType; out?: z.ZodType; valueType?: z.ZodType; element?: z.ZodType; options?: z.ZodType[]; discriminator?: string; getter?: () => z.ZodType; values?: unknown[] }

const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def

/** The object schemas `schema` may be at `input` (one per union option that fits the input's discriminator). */
function objectsAt(schema: z.ZodType, path: readonly PropertyKey[], input: unknown): Def[] {
  const def = defOf(schema)
  switch (def.type) {
    case 'optional':
    case 'default':
    case 'nullable':
    case 'prefault':
    case 'readonly':
      return objectsAt(def.innerType!, path, input)
    case 'pipe':
      // a preprocess (`store: URL` read as `{ url }`) is a pipe from a transform: its keys are the output's
      return objectsAt(defOf(def.in!).type === 'transform' ? def.out! : def.in!, path, input)
    case 'lazy':
      return objectsAt(def.getter!(), path, input)
    case 'union': {
      const options = def.options ?? []
      const tag = def.discriminator !== undefined && isRecord(input) ? input[def.discriminator] : undefined
      const fitting = tag === undefined ? options : options.filter((o) => literalOf(o, def.discriminator!)?.includes(tag) ?? true)
      return fitting.flatMap((o) => objectsAt(o, path, input))
    }
  }
  if (path.length === 0) return def.type === 'object' ? [def] : []
  const [head, ...rest] = path
  const child = isRecord(input) || Array.isArray(input) ? (input as Record<PropertyKey, unknown>)[head as string] : undefined
  if (def.type === 'object') return def.shape?.[head as string] ? objectsAt(def.shape[head as string]!, rest, child) : []
  if (def.type === 'record') return objectsAt(def.valueType!, rest, child)
  if (def.type === 'array') return objectsAt(def.element!, rest, child)
  return []
}

function literalOf(option: z.ZodType, key: string): unknown[] | undefined {
  const field = defOf(option).shape?.[key]
  return field ? defOf(field).values : undefined
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * What an unrecognized key at `path` should be: the allowed key it is a slip of ("did you mean"), else the keys
 * allowed there. `<<` is YAML's merge key, which YAML 1.2 (this parser) reads as an ordinary key.
 */
export function unknownKeyMessage(schema: z.ZodType, root: unknown, path: readonly PropertyKey[], key: string): string {
  if (key === '<<') return 'a YAML merge key ("<<: *anchor"), which is not read: write the keys out here (an alias of a whole value, "key: *anchor", works)'
  const allowed = [...new Set(objectsAt(schema, path, root).flatMap((d) => Object.keys(d.shape ?? {})))]
  if (allowed.length === 0) return `unknown key "${key}"`
  const near = slipsOf(allowed, key)
  if (near.length > 0) return `unknown key "${key}"; did you mean ${near.map((n) => `"${n}"`).join(' or ')}?`
  return `unknown key "${key}"; the keys here are ${allowed.join(', ')}`
}

/** The names of `allowed` that `typed` is a slip of ("did you mean"): see `similar`. */
export function slipsOf(allowed: readonly string[], typed: string): string[] {
  return allowed.filter((a) => similar(a, typed))
}

/** The same word but for case, - for _, or one or two letters (an edit distance of at most 2, 1 for short keys). */
function similar(allowed: string, typed: string): boolean {
  const a = allowed.toLowerCase()
  const b = typed.toLowerCase().replace(/-/g, '_')
  if (a === b) return true
  return distance(a, b) <= (a.length <= 4 ? 1 : 2)
}

function distance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const next = [i]
    for (let j = 1; j <= b.length; j++) next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    row = next
  }
  return row[b.length]!
}

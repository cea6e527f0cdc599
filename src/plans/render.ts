import { WarrantError } from '../contract/index.js'

/**
 * Templates in an action's config: `{{params.NAME}}`, `{{id}}`, `{{version}}`, `{{set.FIELD}}` in values
 * (and `{id}`, `{params.NAME}` in paths). A string that is exactly one placeholder takes the value itself,
 * with its type; a placeholder inside a longer string is replaced by its text. An unknown placeholder is an
 * error, never an empty string.
 */
export interface TemplateContext {
  readonly id: string
  readonly version: string | null
  readonly params: Readonly<Record<string, unknown>>
  /** The rendered set values; absent while `set` itself is being rendered. */
  readonly set?: Readonly<Record<string, unknown>>
}

const WHOLE = /^\{\{\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\}\}$/
const INNER = /\{\{\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\}\}/g
const PATH = /\{\{\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\}\}|\{([A-Za-z_][A-Za-z0-9_.]*)\}/g

export function lookup(name: string, ctx: TemplateContext): unknown {
  if (name === 'id') return ctx.id
  if (name === 'version') return ctx.version
  const dot = name.indexOf('.')
  const head = dot < 0 ? name : name.slice(0, dot)
  const key = dot < 0 ? '' : name.slice(dot + 1)
  if (head === 'params' && key && !key.includes('.')) return Object.hasOwn(ctx.params, key) ? ctx.params[key] : null
  if (head === 'set' && key && !key.includes('.') && ctx.set) {
    if (!Object.hasOwn(ctx.set, key)) throw new WarrantError('invalid_request', `template {{${name}}}: the action does not set "${key}"`, { placeholder: name })
    return ctx.set[key]
  }
  throw new WarrantError('invalid_request', `unknown template placeholder {{${name}}}; known: {{id}}, {{version}}, {{params.NAME}}${ctx.set ? ', {{set.FIELD}}' : ''}`, { placeholder: name })
}

const text = (value: unknown) => (value === null || value === undefined ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value))

/** Renders a template value (string, number, list, object) deeply. */
export function renderValue(template: unknown, ctx: TemplateContext): unknown {
  if (typeof template === 'string') {
    const whole = WHOLE.exec(template)
    if (whole) return lookup(whole[1]!, ctx)
    return template.replace(INNER, (_, name: string) => text(lookup(name, ctx)))
  }
  if (Array.isArray(template)) return template.map((t) => renderValue(t, ctx))
  if (template !== null && typeof template === 'object')
    return Object.fromEntries(Object.entries(template as Record<string, unknown>).map(([k, v]) => [k, renderValue(v, ctx)]))
  return template
}

/** Renders a path template; every substituted value is one percent-encoded path segment. */
export function renderPath(template: string, ctx: TemplateContext): string {
  return template.replace(PATH, (_, a: string | undefined, b: string | undefined) => {
    const name = (a ?? b)!
    const value = text(lookup(name, ctx))
    if (value === '' || value === '.' || value === '..')
      throw new WarrantError('invalid_request', `path placeholder {${name}} renders to "${value}", which cannot be a path segment`, { placeholder: name })
    return encodeURIComponent(value)
  })
}

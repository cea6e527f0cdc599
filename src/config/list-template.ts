/**
 * The JSON body template of a `POST` list request. A placeholder is a whole string value, `"{{name}}"`, and is
 * replaced by a typed value (a number stays a number, a list stays a list); a key whose placeholder has no
 * value (the cursor of a first page, a filter not asked for) is left out. A placeholder inside a longer string
 * is refused at load: values are never spliced into text.
 *
 * Names: `cursor` (the position: cursor, offset, page number or start key), `page_size`, `skip` (1 after the
 * first page of a keyset walk), `filter.FIELD` (its `eq` value) and `filter.FIELD.OP`.
 */

const WHOLE = /^\{\{\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*){0,2})\s*\}\}$/

/** The placeholder a string is, or null when it is a plain string. Throws nothing: see `templateProblems`. */
export function placeholderOf(value: string): string | null {
  const m = WHOLE.exec(value)
  if (!m) return null
  const name = m[1]!
  // `filter.status` means `filter.status.eq`: one name per clause
  return /^filter\.[^.]+$/.test(name) ? `${name}.eq` : name
}

/** Every placeholder in a template, and every string that looks like one but is not a whole value. */
export function scanTemplate(template: unknown): { readonly placeholders: string[]; readonly partial: string[] } {
  const placeholders: string[] = []
  const partial: string[] = []
  const visit = (value: unknown) => {
    if (typeof value === 'string') {
      const name = placeholderOf(value)
      if (name !== null) placeholders.push(name)
      else if (value.includes('{{')) partial.push(value)
    } else if (Array.isArray(value)) value.forEach(visit)
    else if (value !== null && typeof value === 'object') Object.values(value).forEach(visit)
  }
  visit(template)
  return { placeholders, partial }
}

/** Renders a template with the given values; placeholders without a value are left out of their object or list. */
export function renderTemplate(template: unknown, values: ReadonlyMap<string, unknown>): unknown {
  const MISSING = Symbol('missing')
  const render = (value: unknown): unknown => {
    if (typeof value === 'string') {
      const name = placeholderOf(value)
      if (name === null) return value
      return values.has(name) ? values.get(name) : MISSING
    }
    if (Array.isArray(value)) return value.map(render).filter((v) => v !== MISSING)
    if (value !== null && typeof value === 'object') {
      const out: Record<string, unknown> = {}
      for (const [k, v] of Object.entries(value)) {
        const rendered = render(v)
        if (rendered !== MISSING) out[k] = rendered
      }
      return out
    }
    return value
  }
  const out = render(template)
  return out === MISSING ? null : out
}

/** A record's fields cut to a list of names, each missing one as null. */
export type Projector = (fields: Readonly<Record<string, unknown>>) => Record<string, unknown>

/**
 * The projection of `selected` as one object literal (`{ "id": f["id"] ?? null, … }`), compiled once per list: a
 * search of 5,000 records projected them key by key in ~2 ms of its ~70 ms of gateway CPU, ~0.4 ms this way. Same
 * keys in the same order, same values (a name listed twice keeps its first place, as assignments do). Where code
 * generation is disallowed (node --disallow-code-generation-from-strings), the keys one by one.
 *
 * @example projector(['id', 'status'])({ id: 'a', status: 'open', secret: 'x' }) // { id: 'a', status: 'open' }
 */
export function projector(selected: readonly string[]): Projector {
  const members = selected.map((name) => {
    const key = JSON.stringify(name)
    // a literal's "__proto__": would set the prototype; a computed key is an own property like any other
    return `${name === '__proto__' ? `[${key}]` : key}: f[${key}] ?? null`
  })
  try {
    return new Function('f', `return { ${members.join(', ')} }`) as Projector
  } catch {
    return (fields) => {
      const out: Record<string, unknown> = {}
      for (const f of selected) out[f] = fields[f] ?? null
      return out
    }
  }
}

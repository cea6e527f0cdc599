import { WarrantError } from '../contract/index.js'

/** Which record each probed source's write probe is sent to. */
export interface WriteProbeTargets {
  /** The sources probed: `--source`, or every source the resource declares, in its order. */
  readonly sources: readonly string[]
  /** Source → the id given for it. A probed source absent here is probed on the first record its own first page lists. */
  readonly ids: ReadonlyMap<string, string>
}

/**
 * Reads `--write-probe` values (repeatable; '' for the bare flag) against the resource's sources, before anything
 * is read: `SOURCE=ID` names the record of one source (ids are unique per source only); a plain `ID` is the record
 * of the one source probed (a resource of one source, or `--source`), or, on several, the record ID on each source
 * not named (the meaning it always had). On several sources a value with `=` whose prefix is no declared source is
 * refused rather than taken for an id; on one, an id may hold `=`.
 *
 * @example writeProbeTargets(['eu=sub_1', ''], ['eu', 'us']) // eu probed on sub_1, us on a record its first page lists
 */
export function writeProbeTargets(values: readonly string[], declared: readonly string[], only?: string): WriteProbeTargets {
  const listed = declared.join(', ')
  if (only !== undefined && !declared.includes(only)) throw new WarrantError('invalid_request', `the resource declares no source "${only}"; its sources: ${listed}`, { source: only })
  const sources = only === undefined ? declared : [only]
  const ids = new Map<string, string>()
  let plain: string | undefined
  const give = (source: string, id: string, value: string) => {
    if (id === '') throw new WarrantError('invalid_request', `--write-probe "${value}" names no id; give SOURCE=ID`, { value })
    const earlier = ids.get(source)
    if (earlier !== undefined && earlier !== id) throw new WarrantError('invalid_request', `--write-probe gives source "${source}" two ids ("${earlier}", "${id}"); give one`, { source })
    ids.set(source, id)
  }
  for (const value of values) {
    if (value === '') continue
    const eq = value.indexOf('=')
    const named = eq > 0 ? value.slice(0, eq) : null
    if (named !== null && declared.includes(named)) {
      if (!sources.includes(named)) throw new WarrantError('invalid_request', `--write-probe "${value}" names source "${named}", but --source probes "${only}" alone`, { source: named })
      give(named, value.slice(eq + 1), value)
    } else if (sources.length === 1) give(sources[0]!, value, value)
    else if (named !== null)
      throw new WarrantError('invalid_request', `--write-probe "${value}": the resource declares no source "${named}"; its sources: ${listed} (give SOURCE=ID)`, { source: named })
    else if (plain !== undefined && plain !== value) throw new WarrantError('invalid_request', `--write-probe gives two plain ids ("${plain}", "${value}") on a resource of several sources; give SOURCE=ID for each`, { value })
    else plain = value
  }
  if (plain !== undefined) for (const source of sources) if (!ids.has(source)) ids.set(source, plain)
  return { sources, ids }
}

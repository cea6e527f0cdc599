/**
 * The source each target's member was frozen from, for a read by id (`Connector.readByIds`'s `sourceOf`): a
 * record's address is (source, id), so it is read there alone. Targets without one (frozen without one, or
 * committed before 0017 with no certain member to take it from) are left out, and read by id across the sources.
 */
export function sourcesOf(targets: readonly { readonly record_id: string; readonly source: string | null }[]): ReadonlyMap<string, string> | undefined {
  const held = targets.flatMap((t) => (t.source === null ? [] : [[t.record_id, t.source] as const]))
  return held.length === 0 ? undefined : new Map(held)
}

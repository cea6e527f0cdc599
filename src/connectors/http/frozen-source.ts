import { quotedKey } from '../../contract/index.js'

/** An id frozen from a source the resource no longer declares: where it lives now is unknown, so it is not read or written. */
export function undeclaredSource(id: string, source: string, declared: readonly string[]): string {
  return `id ${quotedKey(id)} was frozen from source "${source}", which this resource no longer declares (its sources: ${declared.map((s) => `"${s}"`).join(', ')}): it is not read or written on another source, since the same id there may name another record (restore the source, or make a new selection)`
}

/**
 * A request body or a tool's arguments as an audit row keeps them: whole when their JSON is at most `maxChars`
 * long, else their keys and size. A value JSON cannot serialise (nested deeper than the call stack allows,
 * which the input guard refuses) is named as such: a refusal still leaves its row.
 *
 * @example boundedSummary({ filter: { status: 'active' } }, 4096) // the value itself
 */
export function boundedSummary(value: unknown, maxChars: number): unknown {
  let text: string
  try {
    text = JSON.stringify(value) ?? ''
  } catch {
    return { unrecorded: 'the value cannot be serialised (nested too deeply)' }
  }
  if (text.length <= maxChars) return value
  return value && typeof value === 'object' ? { keys: Object.keys(value as object), bytes: text.length } : { bytes: text.length }
}

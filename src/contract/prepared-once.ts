/** Statements kept per connection, least recently used dropped first. */
export const MAX_PREPARED = 256

/**
 * `prepare` behind a cache of at most `max` statements, one per SQL text: a driver that prepares every query it
 * runs (kysely's SQLite dialect does) pays the parse and plan of the same few texts thousands of times on an
 * executor's path. A statement still being iterated (a streamed read) is `busy`, and the same text then gets a
 * fresh one. For SQLite's v2 statements, which prepare themselves again when the schema changed under them.
 *
 * @example const prepare = preparedOnce((text) => database.prepare(text)); prepare('select 1') === prepare('select 1')
 */
export function preparedOnce<S extends { readonly busy: boolean }>(prepare: (text: string) => S, max = MAX_PREPARED): (text: string) => S {
  const cache = new Map<string, S>()
  return (text) => {
    const cached = cache.get(text)
    if (cached !== undefined) {
      // re-inserted: a Map iterates in insertion order, so the first key is the least recently used
      cache.delete(text)
      cache.set(text, cached)
      return cached.busy ? prepare(text) : cached
    }
    const statement = prepare(text)
    cache.set(text, statement)
    if (cache.size > max) cache.delete(cache.keys().next().value!)
    return statement
  }
}

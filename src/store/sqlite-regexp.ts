import type BetterSqlite3 from 'better-sqlite3'

/**
 * SQLite parses `x REGEXP pattern` but ships no function behind it; this one makes the operator mean what PostgreSQL's
 * `x ~ pattern` means for the patterns the services write (written to mean the same in both: `[0-9]`, not `\d`), so a
 * statement judging a million rows by a pattern runs in the store instead of loading them (plans/version-repeats.ts).
 * NULL in, NULL out, as SQL's comparisons answer. Each pattern compiled once.
 */
export function registerRegexp(database: BetterSqlite3.Database): void {
  const compiled = new Map<string, RegExp>()
  database.function('regexp', { deterministic: true }, (pattern: unknown, value: unknown) => {
    if (pattern === null || value === null) return null
    const source = String(pattern)
    let re = compiled.get(source)
    if (re === undefined) compiled.set(source, (re = new RegExp(source)))
    return re.test(String(value)) ? 1 : 0
  })
}

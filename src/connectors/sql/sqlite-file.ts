import { statSync } from 'node:fs'
import type BetterSqlite3 from 'better-sqlite3'

/**
 * The file a path names now, as its device and inode, or null when nothing is there. An open SQLite handle keeps
 * the inode it opened: once the file is removed, or another moved over its path (a backup restored with
 * `mv other.db demo.db`), the handle reads and writes a file nobody else will ever open. better-sqlite3 does not
 * give the handle's descriptor, so the file a handle is on is the one its path named both just before and just
 * after it was opened (`openPinned`), and it is still at the path while a stat of the path gives that identity.
 * A stat is ~2 µs: taken before each statement outside a transaction and before each COMMIT.
 */
export function fileIdentityOf(path: string): string | null {
  try {
    const stat = statSync(path, { bigint: true })
    return `${stat.dev}:${stat.ino}`
  } catch {
    return null
  }
}

/** A handle with the identity of the file it opened. */
export interface PinnedDatabase {
  readonly database: BetterSqlite3.Database
  readonly identity: string
}

/**
 * Opens the file at `path` with `open`, and tells which file it opened: the path named the same file before and
 * after (else the file moved while it was opened, and the open is tried again, a few times). Null identity (the
 * path names nothing right after a successful open): the file went at that instant; `gone` says so.
 */
export function openPinned(path: string, open: () => BetterSqlite3.Database, gone: () => Error): PinnedDatabase {
  for (let attempt = 0; attempt < 3; attempt++) {
    const before = fileIdentityOf(path)
    const database = open()
    const after = fileIdentityOf(path)
    if (before !== null && before === after) return { database, identity: after }
    database.close()
  }
  throw gone()
}

/** Why a handle's file is not the one at its path, for a message; null while it still is. */
export function movedFrom(path: string, identity: string): 'removed' | 'replaced' | null {
  const now = fileIdentityOf(path)
  return now === identity ? null : now === null ? 'removed' : 'replaced'
}

import { statSync } from 'node:fs'

/*
 * Shared by the SQL connector (a SQLite upstream) and the store (a SQLite store file), which may import nothing of
 * each other: the contract is the one module both import. It is the contract's one stat of the file system, and
 * reads metadata only (no file is opened or written here).
 */

/**
 * The file a path names now, as its device and inode, or null when nothing is there. An open SQLite handle keeps
 * the inode it opened: once the file is removed, or another moved over its path (a backup restored with
 * `mv other.db demo.db`), the handle reads and writes a file nobody else will ever open. better-sqlite3 does not
 * give the handle's descriptor, so the file a handle is on is the one its path named both just before and just
 * after it was opened (`openPinned`), and it is still at the path while a stat of the path gives that identity.
 * A stat is ~2 µs: cheap enough before each statement outside a transaction and around each COMMIT.
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
export interface PinnedHandle<H> {
  readonly database: H
  readonly identity: string
}

/**
 * Opens the file at `path` with `open`, and tells which file it opened: the path named the same file before and
 * after (else the file moved while it was opened, and the open is tried again, a few times). A file the open
 * creates (nothing there before) is pinned by the next attempt, which opens it as it now is. Null identity (the
 * path names nothing right after a successful open): the file went at that instant; `gone` says so.
 */
export function openPinned<H extends { close(): unknown }>(path: string, open: () => H, gone: () => Error): PinnedHandle<H> {
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

import type BetterSqlite3 from 'better-sqlite3'
import type { SqliteDatabase, SqliteStatement } from 'kysely'
import { movedFrom, WarrantError } from '../contract/index.js'

/**
 * Whether the SQLite store is still the file at its path. An open handle keeps the inode it opened: once
 * `warrant.db` is removed, or another file moved over it (a backup restored with `mv`), the handle went on
 * writing the old inode (WAL mode does not mind): the ledger and the audit chain went to a file nobody will read
 * again, and operations "succeeded" there. The store is never reopened on what is at the path now (another store,
 * or an older backup: the ledger and the audit chain would jump); once lost it stays lost, every statement is
 * refused with `store_unavailable`, and the gateway must be restarted on the right file.
 */
export interface StoreFile {
  /** Null while the file opened is still at the path; else the refusal every statement now gets (sticky). */
  unavailable(): WarrantError | null
}

/** How the store's file is checked: `identity` is the device and inode it opened (see contract/file-identity.ts). */
export function watchStoreFile(path: string, display: string, identity: string, onLost: (error: WarrantError) => void): StoreFile {
  let lost: WarrantError | null = null
  return {
    unavailable() {
      if (lost !== null) return lost
      const how = movedFrom(path, identity)
      if (how === null) return null
      lost = new WarrantError(
        'store_unavailable',
        `the SQLite store file ${path} was ${how} while the gateway had it open: nothing more is read from it or written to it. The file now at that path (if any) is not opened in its place: it may be another store or an older backup, and the ledger and the audit chain would jump. Restart the gateway on the right store file.`,
        { store: display, path, file: how },
      )
      onLost(lost)
      return lost
    },
  }
}

/**
 * The store connection as kysely sees it, checked against `file`: before each statement outside a transaction
 * (reads included: a read of the lost file describes a store no longer there) and before and after each COMMIT
 * (a stat is ~2 µs, next to a commit's sync of ~ms). A statement inside a transaction is not checked: its
 * COMMIT is, and what it wrote is rolled back when the file went. Checked after the COMMIT too: a file gone
 * between the check and the commit took the commit with it, and an `in_flight` mark must be in the store at the
 * path before its upstream call is sent, so that commit is refused as well. Once lost, only a ROLLBACK runs (a
 * transaction under way is ended; with none, it does nothing).
 */
export function checkedStatements(inner: SqliteDatabase, database: BetterSqlite3.Database, file: StoreFile): SqliteDatabase {
  const refuseIfLost = () => {
    const refusal = file.unavailable()
    if (refusal !== null) throw refusal
  }
  return {
    close: () => inner.close(),
    prepare(sql) {
      const verb = leadingWord(sql)
      if (verb === 'rollback') {
        if (!database.inTransaction && file.unavailable() !== null) return NOTHING
        return inner.prepare(sql)
      }
      if (verb === 'commit' || verb === 'end') {
        refuseIfLost()
        return afterwardsChecked(inner.prepare(sql), refuseIfLost)
      }
      if (database.inTransaction) return inner.prepare(sql)
      refuseIfLost()
      // BEGIN commits nothing, and a refusal after it had run would leave the transaction open
      if (verb === 'begin') return inner.prepare(sql)
      const statement = inner.prepare(sql)
      // an autocommitted write commits as it runs: checked after it like a COMMIT
      return statement.reader ? statement : afterwardsChecked(statement, refuseIfLost)
    },
  }
}

/** A statement whose run is followed by `check` (which throws when the file went meanwhile). */
function afterwardsChecked(statement: SqliteStatement, check: () => void): SqliteStatement {
  return {
    reader: statement.reader,
    all: (parameters) => statement.all(parameters),
    iterate: (parameters) => statement.iterate(parameters),
    run(parameters) {
      const result = statement.run(parameters)
      check()
      return result
    },
  }
}

/** The statement a ROLLBACK becomes once the store is lost and no transaction is open: nothing to undo. */
const NOTHING: SqliteStatement = {
  reader: false,
  all: () => [],
  iterate: () => [][Symbol.iterator](),
  run: () => ({ changes: 0, lastInsertRowid: 0 }),
}

/** The first word of a statement, lower-cased (`commit`, `rollback`, `select`...). */
function leadingWord(sql: string): string {
  const match = /^\s*([A-Za-z]+)/.exec(sql)
  return match ? match[1]!.toLowerCase() : ''
}

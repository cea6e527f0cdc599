import type { CompiledQuery } from 'kysely'
import type { ConditionalUpdate, Row } from './backend.js'
import { CommitFailedError, messageOf, NotCommittedError } from './errors.js'

/** One connection, held for one transaction. */
export interface WriteConnection {
  run(statement: CompiledQuery | string): Promise<Row[]>
}

/**
 * A `RETURNING` engine's write when its `RETURNING` rows may not be the rows as the statement leaves them
 * (`ConditionalUpdate.returningIsFinal` false), or must be judged before COMMIT (`judgedBeforeCommit`): `begin`, the
 * UPDATE, the rows it returned read again (after its triggers ran; not where they are final), `accept`, then COMMIT. Until COMMIT nothing is durable, so a refusal or a failure before it
 * rolls back and throws `NotCommittedError` (`updateSent` false when `begin` itself failed): nothing was written. A failed COMMIT is thrown as the engine's own
 * error, which says whether the write may have happened.
 */
export async function updateAndReread(connection: WriteConnection, begin: string, { returning, returningIsFinal, rereadOf, accept }: ConditionalUpdate): Promise<Row[]> {
  const rollback = () => connection.run('ROLLBACK').catch(() => undefined)
  try {
    await connection.run(begin)
  } catch (error) {
    // the transaction did not begin: the UPDATE was never sent
    throw new NotCommittedError(messageOf(error), error, false)
  }
  let committing = false
  try {
    const returned = await connection.run(returning)
    if (returned.length === 0) {
      await rollback()
      return []
    }
    // final rows (`returningIsFinal`, here only to be judged before COMMIT) are not read again
    const rows = returningIsFinal ? returned : await connection.run(rereadOf(returned))
    const refusal = accept(rows)
    if (refusal !== undefined) {
      await rollback()
      throw new NotCommittedError(refusal)
    }
    committing = true
    await connection.run('COMMIT')
    return rows
  } catch (error) {
    if (error instanceof NotCommittedError) throw error
    // a COMMIT refused (SQLite busy, a deferred constraint) leaves nothing written once rolled back; one whose
    // answer was lost may have been applied: the engine's error says which
    await rollback()
    if (committing) throw new CommitFailedError(error)
    throw new NotCommittedError(messageOf(error), error)
  }
}

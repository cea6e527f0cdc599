import pg from 'pg'
import { TEST_POSTGRES_ADMIN_URL } from '../../../support/stores.js'
import type { Engine } from './engine.js'

/**
 * Table `guarded` of three rows under row-level security whose one policy shows the 'active' ones ("b" is
 * 'past_due', hidden from every role the policy binds).
 */
export async function createGuardedTable(engine: Engine): Promise<void> {
  await engine.exec('create table guarded (id text primary key, status text, version integer not null)')
  await engine.exec("insert into guarded values ('a', 'active', 1), ('b', 'past_due', 1), ('c', 'active', 1)")
  await engine.exec('alter table guarded enable row level security')
  await engine.exec("create policy only_active on guarded using (status = 'active')")
}

/** The engine's URL, logged in as `role`. */
export function urlAs(engine: Engine, role: string): string {
  const url = new URL(engine.url)
  url.username = role
  return url.toString()
}

/** Roles are the server's, not the test database's: dropping the database leaves them. */
export async function dropRoles(roles: readonly string[]): Promise<void> {
  const admin = new pg.Client({ connectionString: TEST_POSTGRES_ADMIN_URL })
  await admin.connect()
  try {
    for (const role of roles) await admin.query(`drop role if exists ${role}`)
  } finally {
    await admin.end()
  }
}

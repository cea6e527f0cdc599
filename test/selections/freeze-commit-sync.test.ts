import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { sql } from 'kysely'
import { parse as parseYaml } from 'yaml'
import { parseConfig } from '../../src/config/index.js'
import { SYSTEM_ACTOR } from '../../src/contract/index.js'
import { ensureDemoData } from '../../src/demo/index.js'
import { createCursorCodec } from '../../src/inventory/index.js'
import { createCatalogue } from '../../src/resources/index.js'
import { createSelectionService } from '../../src/selections/index.js'
import { STORE_KINDS, createTempDir, createTestStore } from '../support/stores.js'

/**
 * A freeze commits its members a batch at a time while the selection is `building`: nothing rests on those rows
 * until the selection row turns `frozen` (a build found unfinished is discarded), so their commits need not wait
 * for the disk. The commit that freezes the selection does, and it makes every earlier one durable with it (a
 * SQLite WAL and PostgreSQL's WAL are both recovered as a prefix). Observed from inside each commit: a trigger
 * records the connection's setting for every member batch and for the row turning `frozen`.
 */
for (const kind of STORE_KINDS)
  describe(`a freeze's commits and their syncs (${kind} store)`, () => {
    test('member batches commit without waiting for the disk, the frozen row at full sync; full again after', async () => {
      const dir = await createTempDir()
      const { store, drop } = await createTestStore(kind)
      const upstreamUrl = `sqlite:${join(dir.path, 'demo.db')}`
      const raw = parseYaml(readFileSync(new URL('../../config/demo.yaml', import.meta.url), 'utf8')) as Record<string, any>
      raw.store = 'sqlite::memory:'
      raw.resources.subscriptions.connector.url = upstreamUrl
      const catalogue = createCatalogue({ config: parseConfig(raw) })
      try {
        await ensureDemoData({ url: upstreamUrl, count: 2_500 })
        if (store.sqlite) {
          // temp triggers: on this connection only, where `pragma_synchronous` reads the setting the commit runs at
          store.sqlite.exec(`
            create temp table sync_seen (what text, setting text);
            create temp trigger member_sync after insert on selection_members begin insert into sync_seen select 'member', synchronous from pragma_synchronous; end;
            create temp trigger frozen_sync after update of state on selections when new.state = 'frozen' begin insert into sync_seen select 'frozen', synchronous from pragma_synchronous; end;`)
        } else {
          await sql`create table sync_seen (what text, setting text)`.execute(store.db)
          await sql`create function seen_sync() returns trigger language plpgsql as $$ begin insert into sync_seen values (tg_argv[0], current_setting('synchronous_commit')); return null; end $$`.execute(store.db)
          await sql`create trigger member_sync after insert on selection_members for each statement execute function seen_sync('member')`.execute(store.db)
          await sql`create trigger frozen_sync after update of state on selections for each row when (new.state = 'frozen') execute function seen_sync('frozen')`.execute(store.db)
        }
        const selections = createSelectionService({ store, catalogue, cursorCodec: createCursorCodec({ key: randomBytes(32) }) })
        const view = await selections.create(SYSTEM_ACTOR, 'subscriptions', { page_size: 400 })
        assert.equal(view.count, 2_500)

        const seen = (await sql<{ what: string; setting: string | number }>`select what, setting from sync_seen`.execute(store.db)).rows
        const settings = (what: string) => [...new Set(seen.filter((r) => r.what === what).map((r) => String(r.setting)))]
        const [unsynced, synced] = kind === 'sqlite' ? ['1', '2'] : ['off', 'on']
        assert.ok(seen.filter((r) => r.what === 'member').length >= 3, 'three batches at least (1,000 rows each)')
        assert.deepEqual(settings('member'), [unsynced], 'every member batch commits without a sync')
        assert.deepEqual(settings('frozen'), [synced], 'the commit that freezes the selection is synced')
        if (store.sqlite) assert.equal(Number(store.sqlite.pragma('synchronous', { simple: true })), 2, 'the connection is back at FULL')
        else assert.equal((await sql<{ s: string }>`select current_setting('synchronous_commit') as s`.execute(store.db)).rows[0]!.s, 'on')
      } finally {
        await catalogue.close()
        await drop()
        await dir.drop()
      }
    })
  })

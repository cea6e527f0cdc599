import type { GatewayFixture } from './gateway-fixture.js'

/** A principal's stored row by name (it must exist). */
export const principalRow = (fx: GatewayFixture, name: string) => fx.gateway.store.db.selectFrom('principals').selectAll().where('name', '=', name).executeTakeFirstOrThrow()

/** The audit rows of one action, in order, with their summary and details parsed. */
export const auditRowsOf = async (fx: GatewayFixture, action: string) =>
  (await fx.gateway.store.db.selectFrom('audit_events').selectAll().where('action', '=', action).orderBy('seq').execute()).map((r) => ({
    ...r,
    summary: JSON.parse(r.summary),
    details: r.details === null ? null : JSON.parse(r.details),
  }))

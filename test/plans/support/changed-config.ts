import { createPlanService, type PlanService } from '../../../src/plans/index.js'
import type { Catalogue, Resource } from '../../../src/resources/index.js'
import { type GatewayFixture, startDemoGateway } from '../../support/gateway-fixture.js'
import type { StoreKind } from '../../support/stores.js'

/** The gateway's catalogue with each resource's view changed by `edit`, as a restart on an edited config would give. */
export function changedCatalogue(catalogue: Catalogue, edit: (r: Resource) => Resource): Catalogue {
  return { ...catalogue, get: (name) => edit(catalogue.get(name)), list: () => catalogue.list().map(edit) }
}

/** A plan service on the gateway's store and selections over another catalogue: another instance, or the config changed since. */
export function plansOver(fx: GatewayFixture, catalogue: Catalogue): PlanService {
  return createPlanService({ store: fx.gateway.store, catalogue, selections: fx.gateway.selections, execution: fx.gateway.config.execution, cursorCodec: fx.gateway.cursorCodec })
}

/** The demo gateway (200 records, no HTTP server) with one more standing approval on `subscriptions`. */
export function startWithStandingApproval(kind: StoreKind, standing: Record<string, unknown>): Promise<GatewayFixture> {
  return startDemoGateway({ store: kind, count: 200, serve: false, edit: (raw) => raw.resources.subscriptions.standing_approvals.push(standing) })
}

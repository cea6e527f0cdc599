import type { Connector, ReadSession } from '../connectors/connector.js'
import type { Telemetry } from './telemetry.js'

/**
 * A connector whose walk pages are measured and traced: one span per page (resource, source, page size, how
 * it ended, how many records), and the pages and records counters. Reads by id and writes pass through; the
 * calls they make are reported by the connector's own call events. Every optional property of the connector
 * and its sessions is forwarded: one left out turns a guarantee off without a word (the sessions' `positions`
 * once were, and no walk through the gateway could prove itself).
 */
export function instrumentConnector(connector: Connector, resource: string, telemetry: Telemetry): Connector {
  const instrumentSession = (session: ReadSession): ReadSession => ({
    get consistentSnapshot() {
      return session.consistentSnapshot
    },
    get snapshot() {
      return session.snapshot
    },
    // what a position proves decides whether a walk without a snapshot can vouch for itself (`stability`)
    ...(session.positions === undefined ? {} : { positions: session.positions }),
    readPage: (request) =>
      telemetry.span('warrant.walk.page', { 'warrant.resource': resource, 'warrant.source': request.source, 'warrant.page_size': request.pageSize }, async () => {
        const result = await session.readPage(request)
        telemetry.add('warrant_walk_pages_total', { resource, source: request.source, result: result.kind })
        if (result.kind === 'page') telemetry.add('warrant_walk_records_total', { resource, source: request.source }, result.items.length)
        telemetry.annotate({ 'warrant.page.result': result.kind, 'warrant.page.returned': result.kind === 'page' ? result.items.length : 0 })
        return result
      }),
    close: () => session.close(),
  })
  return {
    kind: connector.kind,
    sources: connector.sources,
    ordering: connector.ordering,
    // page numbers hold only at one page size: left out, a walk through the gateway would change it and skip records
    ...(connector.sizedPositions === undefined ? {} : { sizedPositions: connector.sizedPositions }),
    openSession: async () => instrumentSession(await connector.openSession()),
    readByIds: (ids, signal, sourceOf) => connector.readByIds(ids, signal, sourceOf),
    ...(connector.writeEnforcesVersion === undefined ? {} : { writeEnforcesVersion: connector.writeEnforcesVersion }),
    write: (request) => connector.write(request),
    // a window written in one statement instead of target by target (the executor's fast path)
    ...(connector.writeWindow === undefined ? {} : { writeWindow: (requests: Parameters<NonNullable<Connector['writeWindow']>>[0]) => connector.writeWindow!(requests) }),
    ...(connector.writeWindowSize === undefined ? {} : { writeWindowSize: connector.writeWindowSize }),
    ...(connector.refreshFacts === undefined ? {} : { refreshFacts: () => connector.refreshFacts!() }),
    ...(connector.fieldTypeMisfits === undefined ? {} : { fieldTypeMisfits: () => connector.fieldTypeMisfits!() }),
    ...(connector.stringColumns === undefined ? {} : { stringColumns: () => connector.stringColumns!() }),
    ...(connector.numberColumns === undefined ? {} : { numberColumns: () => connector.numberColumns!() }),
    ...(connector.versionColumnProblem === undefined ? {} : { versionColumnProblem: () => connector.versionColumnProblem!() }),
    ...(connector.tableProblems === undefined ? {} : { tableProblems: () => connector.tableProblems!() }),
    close: () => connector.close(),
  }
}

import { startUpstream, type Handler, type TestUpstream } from '../connectors/http/upstream-server.js'
import { createCliWorkspace, type CliWorkspace } from './cli-config.js'

/** An http resource `items` over one cursor-paged source "main" at `origin` (`/items`, `?cursor=`), version from its `version` field. */
export function httpItemsResource(origin: string): Record<string, unknown> {
  return {
    environment: { name: 'test-upstream' },
    connector: {
      kind: 'http',
      timeout_ms: 2000,
      sources: [{ name: 'main', base_url: origin }],
      list: { path: '/items', pagination: { style: 'cursor' } },
      get: { path: '/items/{id}' },
      version: { from: 'field', field: 'version' },
    },
    fields: { id: 'string', status: 'string', version: 'integer' },
    review_fields: ['id', 'status'],
  }
}

/** A CLI workspace (the demo config) with the resource `items` on a loopback upstream answering by `handler`; `drop` closes both. */
export async function createHttpItemsWorkspace(handler: Handler): Promise<CliWorkspace & { readonly upstream: TestUpstream }> {
  const upstream = await startUpstream(handler)
  try {
    const ws = await createCliWorkspace({
      count: 10,
      edit: (raw) => {
        raw.resources.items = httpItemsResource(upstream.origin)
      },
    })
    return {
      ...ws,
      upstream,
      drop: async () => {
        await ws.drop()
        await upstream.close()
      },
    }
  } catch (error) {
    await upstream.close()
    throw error
  }
}

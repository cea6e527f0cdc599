/**
 * A resource over another table of the demo's upstream, in the demo's environment: an `id` string and a `version`
 * integer besides `fields`, every field a review field. Added to the demo config (`startDemoGateway`'s `edit`).
 */
export function addSqlResource(config: any, table: string, fields: Record<string, string>, actions: Record<string, unknown>): void {
  const { environment, connector } = config.resources.subscriptions
  config.resources[table] = {
    environment,
    connector: { kind: 'sql', url: connector.url, table },
    fields: { id: 'string', version: 'integer', ...fields },
    id_field: 'id',
    version_field: 'version',
    review_fields: ['id', ...Object.keys(fields)],
    actions,
  }
}

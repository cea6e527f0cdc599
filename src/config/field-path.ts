import type { ResourceConfig } from './schema.js'

/**
 * Where a declared field lives in the upstream's record, as a dotted path: the http connector's `field_paths`
 * entry when it declares one, else the field's own name (as the http connector's `fieldPath` reads it). Writes apply set fields at these paths and the
 * whole-record check after a write exempts exactly them.
 */
export function fieldPathOf(resource: ResourceConfig, field: string): string {
  if (resource.connector.kind !== 'http') return field
  const paths = resource.connector.field_paths
  return Object.hasOwn(paths, field) ? paths[field]! : field
}

/** The dotted path of the version inside a record, when the version is a field (not an ETag header). */
export function versionPathOf(resource: ResourceConfig): string | null {
  const connector = resource.connector
  if (connector.kind === 'sql') return resource.version_field ? fieldPathOf(resource, resource.version_field) : null
  return connector.version.from === 'field' ? fieldPathOf(resource, connector.version.field) : null
}

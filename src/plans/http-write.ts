import type { HttpWrite } from '../connectors/index.js'
import { fieldPathOf, versionPathOf, versionPlacementOf, type ResourceConfig, type WriteConfig } from '../config/index.js'
import { renderPath, renderValue, type TemplateContext } from './render.js'

/** The http write one target receives: the action's write config with its templates rendered. */
export function renderHttpWrite(write: WriteConfig, rendering: TemplateContext): HttpWrite {
  return {
    method: write.method,
    path: renderPath(write.path, rendering),
    ...(write.body === undefined ? {} : { body: renderValue(write.body, rendering) }),
    ifMatch: versionPlacementOf(write).in === 'header',
    style: write.style,
    version: versionPlacementOf(write),
    ...(write.new_version ? { newVersion: write.new_version } : {}),
  }
}

/**
 * What a write may change in the record, as dotted paths: each set field at its path, the version, and what
 * the upstream stamps itself (`write.may_change`, and `updated_at`, which the sql connector stamps).
 */
export function exemptPaths(resource: ResourceConfig, write: WriteConfig | undefined, set: Readonly<Record<string, unknown>>): string[] {
  const paths = Object.keys(set).map((field) => fieldPathOf(resource, field))
  const version = versionPathOf(resource)
  if (version !== null) paths.push(version)
  // With the version from the ETag, a list item's tag member (see the http connector's record) is a version too.
  if (resource.connector.kind === 'http' && resource.connector.version.from === 'etag') paths.push('etag', '_etag')
  if (write?.version?.in === 'body') paths.push(write.version.path)
  if (write) paths.push(...write.may_change)
  if (resource.connector.kind === 'sql' && resource.fields.updated_at === 'timestamp') paths.push('updated_at')
  return [...new Set(paths)]
}

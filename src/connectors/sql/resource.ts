import { WarrantError } from '../../contract/index.js'
import { configKeyRefusal, type FieldType, type ResourceConfig, type SqlConnectorConfig } from '../../config/index.js'
import { fieldTypeOf, type FieldTypes } from './compile.js'

/** A resource checked to be usable as one SQL table: its id and version columns are of types we can key on. */
export interface SqlResource {
  readonly config: SqlConnectorConfig
  readonly fields: FieldTypes
  readonly idField: string
  readonly idType: FieldType
  readonly versionField: string
  readonly versionType: FieldType
}

const VERSION_TYPES: readonly FieldType[] = ['integer', 'timestamp', 'string']
const ID_TYPES: readonly FieldType[] = ['string', 'integer', 'number', 'timestamp']

/** @throws WarrantError('invalid_request') for a resource that is not a usable sql resource. */
export function resolveSqlResource(resource: ResourceConfig): SqlResource {
  if (resource.connector.kind !== 'sql') throw new WarrantError('invalid_request', `createSqlConnector needs a sql resource, got kind "${resource.connector.kind}"`)
  const config: SqlConnectorConfig = resource.connector
  const fields: FieldTypes = resource.fields
  const idField = resource.id_field
  const idType = fieldTypeOf(fields, idField, 'id_field')
  if (!ID_TYPES.includes(idType)) throw configKeyRefusal('id_field', `"${idField}" is a ${idType} field; an id is a string or a number`)
  const declaredVersionField = resource.version_field
  if (declaredVersionField === undefined) throw configKeyRefusal('version_field', 'a sql resource needs version_field: the column that changes on every write')
  const versionField: string = declaredVersionField
  const versionType = fieldTypeOf(fields, versionField, 'version_field')
  if (!VERSION_TYPES.includes(versionType)) {
    throw configKeyRefusal('version_field', `"${versionField}" is a ${versionType} field; a version is an integer, a timestamp or a string`)
  }
  return { config, fields, idField, idType, versionField, versionType }
}

/**
 * An id as a statement parameter of the id column's type; undefined when no row could have it. An integer
 * past 2^53 goes as a bigint, exactly: as a number it would round to another row's id.
 */
export function idParam(idType: FieldType, id: string): string | number | bigint | undefined {
  if (idType === 'string' || idType === 'timestamp') return id
  if (idType === 'integer' ? !/^-?\d+$/.test(id) : !Number.isFinite(Number(id)) || id.trim() === '') return undefined
  const n = Number(id)
  return !Number.isSafeInteger(n) && /^\s*-?\d+\s*$/.test(id) ? BigInt(id.trim()) : n
}

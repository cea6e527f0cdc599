export { createSqlConnector, type SqlConnector, type SqlConnectorOptions } from './sql-connector.js'
export { compileFilter, OPERATORS_BY_TYPE, type FieldTypes } from './compile.js'
export { normaliseValue, toSourceRecord } from './record.js'
export { parseSqlUrl, type SqlLocation, type SqlDialectName } from './url.js'

export type {
  Connector,
  ReadSession,
  ReadPageRequest,
  ReadPageResult,
  ReadByIdsResult,
  SourceRecord,
  WriteRequest,
  WriteOutcome,
  WriteThrew,
  HttpWrite,
  UpstreamCall,
  UpstreamCallListener,
  TableProblem,
} from './connector.js'
export type { FieldTypeMisfit, StringColumn, NumberColumn, StringKeeping } from './column-keeping.js'
export { createHttpConnector, type HttpConnectorOptions } from './http/index.js'
export { createSqlConnector, type SqlConnector, type SqlConnectorOptions } from './sql/index.js'
export { createConnector, type CreateConnectorOptions } from './create-connector.js'
export { callContext, type CallContext } from './call-context.js'
export { withRepresentation } from './representation.js'
export { fitsDeclaredType } from './field-type.js'
export { numberMisfitMessage, restoresHeld, setMisfit, setMisfitMessage, setNumberMisfit, setStringMisfit, stringMisfitMessage } from './set-misfit.js'

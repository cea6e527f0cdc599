export {
  configSchema,
  resourceSchema,
  actionSchema,
  connectorSchema,
  sqlConnectorSchema,
  httpConnectorSchema,
  paginationSchema,
  standingApprovalSchema,
  notificationsSchema,
  webhookSchema,
  NOTIFICATION_EVENTS,
  type NotificationsConfig,
  type WebhookConfig,
  type NotificationEventKind,
  fieldTypeSchema,
  type WarrantConfig,
  type ResourceConfig,
  type ActionConfig,
  type ConnectorConfig,
  type SqlConnectorConfig,
  type HttpConnectorConfig,
  type PaginationConfig,
  type FieldType,
} from './schema.js'
export { parseConfig, loadConfigFile, resolvePaths, checkedConfigSchema } from './load.js'
export { readSecret, describeSecret, type SecretRef } from './secret.js'
export { environmentLabel } from './environment.js'

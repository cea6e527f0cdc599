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
  writeSchema,
  versionPlacementOf,
  versionPlacementSchema,
  WRITE_STYLES,
  type WriteConfig,
  type WriteStyle,
  type VersionPlacement,
} from './schema.js'
export { fieldPathOf, versionPathOf } from './field-path.js'
export { notRestorableText, restorabilityOf, type Restorability } from './restorability.js'
export { parseConfig, loadConfigFile, resolvePaths, checkedConfigSchema } from './load.js'
export { readSecret, describeSecret, type SecretRef } from './secret.js'
export { configKeyRefusal, withinResource } from './config-key.js'
export { slipsOf } from './unknown-keys.js'
export { checkSecrets, secretRefsOf } from './config-secrets.js'
export { connectorHostsOf, environmentLabel, mislabelledHostOf } from './environment.js'
export {
  COUNTER_OR_TIME,
  COUNTER_OR_TIME_SOURCE,
  FEWEST_VERSIONED_RECORDS,
  RECORDS_PER_VERSION,
  mostRepeatingDistinct,
  stringVersionField,
  versionOverwrite,
  versionsRepeat,
} from './version-repeats.js'

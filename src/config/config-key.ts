import { WarrantError } from '../contract/index.js'

/**
 * A refusal of one config key found past the schema (a connector built from its resource, a secret read): its message
 * starts with the key, as the schema's own messages do, and `details.key` holds it. A connector names the key from its
 * resource (`connector.sources[0].base_url`); `withinResource` puts the resource's path in front.
 *
 * @example throw configKeyRefusal('connector.get.path', '/items must contain {id}')
 */
export function configKeyRefusal(key: string, message: string, details: Record<string, unknown> = {}): WarrantError {
  return new WarrantError('invalid_request', `${key}: ${message}`, { ...details, key })
}

/**
 * A refusal of resource `name`'s config, its key made full from the config file's root (`resources.crm.connector.…`),
 * so an engineer finds the line; one that names no key names the resource.
 */
export function withinResource(name: string, error: WarrantError): WarrantError {
  const details = error.details as Record<string, unknown> | undefined
  const key = details?.key
  if (typeof key === 'string' && error.message.startsWith(`${key}: `))
    return new WarrantError(error.code, `resources.${name}.${error.message}`, { ...details, key: `resources.${name}.${key}` })
  return new WarrantError(error.code, `resources.${name}: ${error.message}`, error.details)
}

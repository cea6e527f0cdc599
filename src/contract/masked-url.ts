/** `scheme://user:password@`, the user info ending at the last `@` of the authority, as a URL parser reads it. */
const USER_PASSWORD = /^([a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^/?#@:]*):[^/?#]*@/
/**
 * The same, the password running to the last `@` anywhere: a password holding an unencoded "/", "?" or "#"
 * makes the URL unparsable (or a port and a path), and that is exactly the URL a refusal quotes.
 */
const LOOSE_USER_PASSWORD = /^([a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^/?#@:]*):[^]*@/
/**
 * Query parameters that hold a secret: libpq and the pg driver take `password` (and `sslpassword`) from the
 * query string as well as from the user info.
 */
const SECRET_PARAMETER = /([?&][^=&#]*(?:pass|secret|token|api[-_]?key)[^=&#]*=)[^&#]*/gi

/**
 * A database URL as it may appear in a message or a log: the password of `scheme://user:password@host…` and
 * the value of every query parameter named like a secret (`?password=…`) shown as `***`; the rest as written.
 *
 * @example maskPassword('postgres://app:pw@db/x?sslmode=require&password=pw') // 'postgres://app:***@db/x?sslmode=require&password=***'
 */
export function maskPassword(url: string): string {
  const pattern = USER_PASSWORD.test(url) ? USER_PASSWORD : LOOSE_USER_PASSWORD
  return url.replace(pattern, '$1:***@').replace(SECRET_PARAMETER, '$1***')
}

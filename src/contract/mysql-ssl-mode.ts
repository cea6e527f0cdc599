/**
 * The TLS a mysql:// URL asks for, as `?ssl-mode=` in the MySQL client's own words (case-insensitive). PREFERRED
 * is not one: mysql2 cannot fall back from TLS to plain, and a mode that may end up plain says nothing sure.
 * - DISABLED: plain
 * - REQUIRED: encrypted, the server's certificate not checked (MySQL's meaning): a man in the middle can read it
 * - VERIFY_CA: encrypted, the certificate signed by a trusted CA (Node's, plus NODE_EXTRA_CA_CERTS), any name
 * - VERIFY_IDENTITY: that, and the certificate names the host connected to: what stops a man in the middle
 */
export const MYSQL_SSL_MODES = ['DISABLED', 'REQUIRED', 'VERIFY_CA', 'VERIFY_IDENTITY'] as const
export type MysqlSslMode = (typeof MYSQL_SSL_MODES)[number]

/** The URL parameter that carries it. */
export const MYSQL_SSL_MODE_PARAM = 'ssl-mode'

/** `value` as a mode, or undefined when it names none. */
export function mysqlSslModeOf(value: string): MysqlSslMode | undefined {
  const upper = value.toUpperCase()
  return MYSQL_SSL_MODES.find((mode) => mode === upper)
}

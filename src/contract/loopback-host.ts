/**
 * Whether a host name is this machine: what is sent to it never crosses a network. Takes a URL's hostname
 * (`[::1]`, bracketed) as well as a driver's host (`::1`).
 *
 * @example isLoopbackHost('127.0.0.1') // true
 * @example isLoopbackHost('db.internal') // false
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase()
  return host === 'localhost' || host.endsWith('.localhost') || host === '[::1]' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)
}

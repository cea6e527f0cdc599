/**
 * A 404 or 410 is the API's word that a record is absent only when the API said it. An HTML page in its place
 * (Express's "Cannot GET /item/r001", nginx's "404 Not Found", a load balancer's error page) is the server or a
 * proxy answering a path it has no route for: a `get.path` or write path that does not match this upstream
 * gets it for every id, and each record a walk had just shown would read as missing. Such a page is the status,
 * not the absence. An empty body or any other answer (JSON, text) stays the API's.
 *
 * @example pageNotFound('main', 404, new Headers({ 'content-type': 'text/html' }), '<html>…', 'connector.get.path') // a sentence
 */
export function pageNotFound(source: string, status: number, headers: Headers, body: string | null, configKey: string): string | null {
  if (status !== 404 && status !== 410) return null
  const type = (headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase()
  const html = type === 'text/html' || type === 'application/xhtml+xml' || ((type === '' || type === 'text/plain') && body !== null && /^\s*<(!doctype\s+html|html)[\s>]/i.test(body))
  if (!html) return null
  return `source "${source}" answered ${status} with an HTML page, not an answer of its API: it proves no absence (a path this upstream has no route for? check ${configKey})`
}

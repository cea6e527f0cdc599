import type { Server } from 'node:http'
import type { Http2SecureServer, Http2Server } from 'node:http2'
import type { Duplex } from 'node:stream'
import { maxHeaderSize } from 'node:http'
import { WarrantError } from '../contract/index.js'

/**
 * Answers what Node's HTTP parser refuses before any route sees it, in the API's JSON error shape: a request line
 * and headers past Node's limit are 431 `headers_too_large` naming the limit (Node sent 431 with no body at all),
 * a request Node cannot parse is 400 `invalid_request` naming the fault (Node sent a bare 400), a request that did
 * not arrive in time 408. The connection is then closed: what follows on it cannot be read as a request.
 */
export function answerClientErrors(server: Server | Http2Server | Http2SecureServer): void {
  ;(server as Server).on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy()
      return
    }
    const [status, reason, refusal] = clientRefusal(error)
    const body = JSON.stringify(refusal.toBody())
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    )
  })
}

function clientRefusal(error: NodeJS.ErrnoException): [number, string, WarrantError] {
  if (error.code === 'HPE_HEADER_OVERFLOW')
    return [
      431,
      'Request Header Fields Too Large',
      new WarrantError(
        'headers_too_large',
        `the request's URL and headers together are larger than ${maxHeaderSize} bytes, the most this gateway reads; send a shorter URL (a long filter goes in a POST body) or fewer or smaller headers`,
        { max_bytes: maxHeaderSize },
      ),
    ]
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT' || error.code === 'HPE_REQUEST_TIMEOUT')
    return [408, 'Request Timeout', new WarrantError('invalid_request', 'the request did not arrive in time; nothing was done', { reason: 'request_timeout' })]
  const fault = error.code?.startsWith('HPE_') ? `${error.code.slice(4).toLowerCase().replaceAll('_', ' ')}` : 'unreadable'
  return [
    400,
    'Bad Request',
    new WarrantError('invalid_request', `malformed HTTP request (${fault}): it could not be read as an HTTP/1.1 request; nothing was done`, { reason: error.code ?? 'malformed' }),
  ]
}

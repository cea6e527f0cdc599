/**
 * The rest of a streamed body after `text`, and whether the connection ended it cleanly: a cut one (the gateway
 * failed the stream) rejects the read, which is how a client tells a file cut short from a whole one.
 */
export async function readRest(reader: ReadableStreamDefaultReader<Uint8Array>, text = ''): Promise<{ text: string; ended: 'clean' | 'cut' }> {
  const decoder = new TextDecoder()
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return { text, ended: 'clean' }
      text += decoder.decode(value, { stream: true })
    }
  } catch {
    return { text, ended: 'cut' }
  }
}

/** The whole body as far as it came, and whether the connection ended it cleanly. */
export const readAll = (res: Response) => readRest(res.body!.getReader())

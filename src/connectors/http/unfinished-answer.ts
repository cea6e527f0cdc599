/**
 * Why a 2xx answer to a read is not the answer asked for, by its own word, or null when it may be. 202 Accepted:
 * the upstream took the request to answer it later (GitHub's statistics while it computes them, an asynchronous
 * search job), so its body says what it will hold, or nothing yet: an empty list there is "not computed yet",
 * never "none", and a record there may be one it has not applied. A read so answered is read again later.
 */
export function unfinishedAnswer(source: string, status: number): string | null {
  if (status === 202)
    return `source "${source}" answered 202 Accepted: it took the read to answer it later, so its body is not what it holds now`
  return null
}

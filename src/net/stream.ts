// Reading a body stream whose length nobody vouches for (a chunked request, a response whose
// Content-Length may lie): count while reading and stop at a limit, so memory stays bounded.

/**
 * The whole stream, or — past `maxBytes` — null after cancelling it; with `truncate`, its first
 * `maxBytes` instead.
 */
export async function readBounded(stream: ReadableStream<Uint8Array> | null, maxBytes: number, truncate = false): Promise<Uint8Array | null> {
  if (!stream) return new Uint8Array(0);
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      if (!truncate) return null;
      chunks.push(value.subarray(0, value.byteLength - (size - maxBytes)));
      return Buffer.concat(chunks, maxBytes);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, size);
}

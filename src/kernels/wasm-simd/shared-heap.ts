/**
 * Node only: tfjs-wasm's heap as a shared WebAssembly.Memory, so kernel-threads.ts's workers can work on
 * it. tfjs runs its threaded build (whose memory is shared) only in a browser; in Node it loads the
 * single-threaded SIMD build, which defines its own memory. That definition's limits flag says whether
 * the memory is shared: set to "shared, with a maximum" (the module already declares a maximum), the
 * same code runs over a SharedArrayBuffer. Nothing else in the module changes, and its loads and stores
 * need no atomics (only one thread runs tfjs; ours touch the buffers a kernel was given).
 */

/** The module's bytes with its defined memory made shared; unchanged if it defines none or has no maximum. */
export function shareDefinedMemory(bytes: Uint8Array): Uint8Array {
  const out = bytes.slice();
  let at = 8; // past the magic number and version
  const uleb = () => {
    let value = 0;
    for (let shift = 0; ; shift += 7) {
      const byte = out[at++];
      value += (byte & 0x7f) * 2 ** shift;
      if (!(byte & 0x80)) return value;
    }
  };
  while (at < out.length) {
    const id = out[at++];
    const size = uleb();
    const end = at + size;
    if (id === 5) {
      const count = uleb();
      if (count === 1 && out[at] === 0x01) out[at] = 0x03; // limits: 0x01 min+max → 0x03 shared min+max
      return out;
    }
    at = end;
  }
  return out;
}

/** Runs `start` (tf.setBackend('wasm') and its tf.ready()) with WebAssembly.instantiate sharing the memory of what it compiles from bytes. */
export async function withSharedHeap<T>(start: () => Promise<T>): Promise<T> {
  const instantiate = WebAssembly.instantiate;
  const shared = (source: unknown, imports?: WebAssembly.Imports) => {
    const bytes =
      source instanceof ArrayBuffer
        ? new Uint8Array(source)
        : ArrayBuffer.isView(source)
          ? new Uint8Array(source.buffer, source.byteOffset, source.byteLength)
          : null;
    return bytes ? instantiate(shareDefinedMemory(bytes), imports) : instantiate(source as WebAssembly.Module, imports);
  };
  WebAssembly.instantiate = shared as typeof WebAssembly.instantiate;
  try {
    return await start();
  } finally {
    WebAssembly.instantiate = instantiate;
  }
}

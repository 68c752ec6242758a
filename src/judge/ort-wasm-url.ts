/**
 * Browser only: the onnxruntime-web wasm binary, emitted by Vite as a file of the app itself so nothing
 * is fetched from a CDN. Pass `{ wasmPaths: ortWasmPaths }` to `OnnxJudge.create`. Node never imports this.
 */
import ortWasm from 'onnxruntime-web/ort-wasm-simd-threaded.wasm?url';

export const ortWasmPaths = { wasm: ortWasm };

/** Node worker_thread entry of the js sandbox's own thread (src/sandbox/js-thread.ts): its messages arrive on parentPort. */
import { parentPort } from 'node:worker_threads';
import { serveJsSandbox, type ToSandbox } from '../src/sandbox/js-thread-serve.ts';

serveJsSandbox({
  post: (m) => parentPort!.postMessage(m),
  onMessage: (listener) => parentPort!.on('message', (m: ToSandbox) => listener(m)),
});

/** Node worker_thread entry of an environment module's host (src/envs/module-host.ts): its messages arrive on parentPort. */
import { parentPort } from 'node:worker_threads';
import { serveModuleHost } from '../src/envs/module-host-serve.ts';
import type { ToHost } from '../src/envs/module-host-protocol.ts';

serveModuleHost({
  post: (m) => parentPort!.postMessage(m),
  onMessage: (listener) => parentPort!.on('message', (m: ToHost) => listener(m)),
});

/** Web worker entry of an environment module's host (src/envs/module-host.ts), spawned by the engine worker. */
import { serveModuleHost } from '../src/envs/module-host-serve.ts';
import type { ToHost } from '../src/envs/module-host-protocol.ts';

serveModuleHost({
  post: (m) => self.postMessage(m),
  onMessage: (listener) => self.addEventListener('message', (e: MessageEvent<ToHost>) => listener(e.data)),
});

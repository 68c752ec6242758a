/** Web worker entry of the js sandbox's own thread (src/sandbox/js-thread.ts), spawned by the thread whose tool calls it runs. */
import { serveJsSandbox, type ToSandbox } from '../src/sandbox/js-thread-serve.ts';

serveJsSandbox({
  post: (m) => self.postMessage(m),
  onMessage: (listener) => self.addEventListener('message', (e: MessageEvent<ToSandbox>) => listener(e.data)),
});

/**
 * A thread the caller can terminate, on either platform: a Web Worker (the caller passes its
 * constructor call, so the bundler sees the literal `new URL(…, import.meta.url)` it copies), or a
 * Node worker_thread booted on TypeScript source (workers/node-boot.mjs). The sandbox's own thread
 * (js-thread.ts) and an environment module's host (envs/module-host.ts) are spawned here.
 */

/** What such a thread looks like to its caller. */
export interface HostThread<ToThread> {
  post(message: ToThread): void;
  terminate(): void;
  /** Node: whether the thread keeps the process alive (an idle one must not). */
  hold(held: boolean): void;
}

export interface ThreadListener<FromThread> {
  message(message: FromThread): void;
  /** The thread failed or exited without being terminated. */
  crash(error: Error): void;
}

const inNode = typeof process !== 'undefined' && Boolean(process.versions?.node);

/** `browser` builds the Web Worker; `nodeEntry` is the file under workers/ a Node thread runs. */
export async function spawnThread<ToThread, FromThread>(
  browser: () => Worker,
  nodeEntry: string,
  listener: ThreadListener<FromThread>,
): Promise<HostThread<ToThread>> {
  if (!inNode) {
    const worker = browser();
    worker.onmessage = (event: MessageEvent<FromThread>) => listener.message(event.data);
    worker.onerror = (event) => listener.crash(new Error(event.message || 'the thread failed to start'));
    return { post: (m) => worker.postMessage(m), terminate: () => worker.terminate(), hold: () => {} };
  }
  // Not literals: the browser bundle must neither resolve nor copy the Node-only files.
  const specifier = 'node:worker_threads';
  const { Worker: NodeWorker } = (await import(/* @vite-ignore */ specifier)) as typeof import('node:worker_threads');
  const here = import.meta.url;
  const boot = new URL(['..', '..', 'workers', 'node-boot.mjs'].join('/'), here);
  const entry = new URL(['..', '..', 'workers', nodeEntry].join('/'), here).href;
  const worker = new NodeWorker(boot, { workerData: { entry } });
  worker.on('message', (m: FromThread) => listener.message(m));
  worker.on('error', (e) => listener.crash(e));
  let ended = false;
  worker.on('exit', (code) => {
    if (!ended) listener.crash(new Error(`exited unexpectedly (code ${code})`));
  });
  return {
    post: (m) => worker.postMessage(m),
    terminate: () => {
      ended = true;
      void worker.terminate();
    },
    hold: (held) => (held ? worker.ref() : worker.unref()),
  };
}

/**
 * A task file or environment module read from a URL (the CLI's `tasks.task_file` / `--env-file`, the
 * Environments screen's "From URL"), with the bounds of every network read (net.ts): a connect
 * timeout, a stall rule and a size limit that fits such a file. The file name (for the format) is the
 * URL's last path segment.
 */
import { MAX_TASK_FILE_BYTES } from '../../envs/task-file/index.ts';
import { boundedChunks, concatBytes, fetchWithTimeout, NetError, type ReadLimits } from '../../net.ts';

/** A task file's size cap bounds the download too (a module is far smaller). */
const ENVIRONMENT_URL_LIMITS: ReadLimits = {
  connectTimeoutMs: 30_000,
  idleTimeoutMs: 30_000,
  maxBytes: MAX_TASK_FILE_BYTES,
};

export function isUrl(path: string): boolean {
  return /^https?:\/\//i.test(path);
}

export async function fetchEnvironmentFile(
  url: string,
  options: { signal?: AbortSignal; limits?: ReadLimits; fetchImpl?: typeof fetch } = {},
): Promise<{ bytes: Uint8Array; fileName: string }> {
  const limits = options.limits ?? ENVIRONMENT_URL_LIMITS;
  const { response, controller } = await fetchWithTimeout(
    options.fetchImpl ?? fetch,
    url,
    {},
    limits.connectTimeoutMs,
    options.signal,
  );
  if (!response.ok) {
    controller.abort();
    throw new NetError(
      'http',
      url,
      `GET ${url}: HTTP ${response.status}; check the URL (it must serve the file itself, not a page about it)`,
      response.status >= 500,
      response.status,
    );
  }
  const chunks: Uint8Array[] = [];
  let length = 0;
  for await (const chunk of boundedChunks(response, controller, url, limits, null)) {
    chunks.push(chunk);
    length += chunk.length;
  }
  const fileName = decodeURIComponent(new URL(url).pathname.split('/').pop() || 'environment');
  return { bytes: concatBytes(chunks, length), fileName };
}

import { describe, expect, it } from 'vitest';
import { getEnvironment } from '../../src/envs/registry.ts';
import {
  environmentSourceFromFile,
  installedSources,
  installEnvironmentSource,
  sourceDigest,
} from '../../src/envs/sources.ts';

const rows = (n: number, offset = 0) =>
  Array.from({ length: n }, (_, i) =>
    JSON.stringify({ prompt: `What is ${i + offset} + 1?`, answer: String(i + offset + 1) }),
  ).join('\n');

describe('a user environment installed in a thread', () => {
  it('is built once per content, so a worker configured with a copy of its source keeps the environment it has', async () => {
    const source = await environmentSourceFromFile(rows(50), 'carried-sums.jsonl');
    expect(installedSources([source.name])).toEqual([]);
    const installed = await installEnvironmentSource(source);
    expect(installedSources([source.name])).toEqual([source]);
    // A copy of the source (a worker's configuration is a structured clone): the environment stays as built.
    expect(await installEnvironmentSource(structuredClone(source))).toBe(installed);
    // New content replaces it.
    const changed = await environmentSourceFromFile(rows(50, 7), 'carried-sums.jsonl');
    const rebuilt = await installEnvironmentSource(changed);
    expect(rebuilt).not.toBe(installed);
    expect(getEnvironment(source.name)).toBe(rebuilt);
    expect(sourceDigest(installedSources([source.name])[0])).toBe(sourceDigest(changed));
    expect(installedSources(['arith_tool'])).toEqual([]); // built-ins travel by name
  });
});

import { describe, expect, it } from 'vitest';
import { getEnvironment } from '../../src/envs/registry.ts';
import { environmentSourceFromFile, installEnvironmentSource, jobEnvironment, sourceDigest } from '../../src/envs/sources.ts';

const rows = (n: number, offset = 0) => Array.from({ length: n }, (_, i) => JSON.stringify({ prompt: `What is ${i + offset} + 1?`, answer: String(i + offset + 1) })).join('\n');

describe('a user environment carried by episode jobs', () => {
  it('carries its digest, so a worker that has it installed keeps it without hashing the rows again', async () => {
    const source = await environmentSourceFromFile(rows(50), 'carried-sums.jsonl');
    expect(jobEnvironment(source.name)).toEqual({});
    const installed = await installEnvironmentSource(source);
    const job = jobEnvironment(source.name);
    expect(job).toEqual({ environment: source, environment_digest: sourceDigest(source) });
    // A job's copy of the source (structured clone in a worker) with its digest: the environment stays as built.
    expect(await installEnvironmentSource(structuredClone(job.environment!), job.environment_digest)).toBe(installed);
    // New content comes with a new digest and replaces it.
    const changed = await environmentSourceFromFile(rows(50, 7), 'carried-sums.jsonl');
    const rebuilt = await installEnvironmentSource(changed, sourceDigest(changed));
    expect(rebuilt).not.toBe(installed);
    expect(getEnvironment(source.name)).toBe(rebuilt);
    expect(jobEnvironment(source.name).environment_digest).toBe(sourceDigest(changed));
    expect(jobEnvironment('arith_tool')).toEqual({}); // built-ins travel by name
  });
});

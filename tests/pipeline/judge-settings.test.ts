import { describe, expect, it } from 'vitest';
import { validateRunConfig } from '../../src/config/validate.ts';
import { applyJudgeSwitches, IN_BROWSER_JUDGE } from '../../src/pipeline/operations/judge-settings.ts';

const remote = { id: 'gpt', base_url: 'https://api.example.com/v1', model: 'gpt-4o-mini', enabled: true, hasKey: true };

function config(judge: Record<string, unknown> = {}) {
  const { config, errors } = validateRunConfig({ name: 'switches', judge });
  if (!config) throw new Error(JSON.stringify(errors));
  return config;
}

describe('applyJudgeSwitches', () => {
  it('adds the in-browser judge and each enabled remote judge once, keyed by id, with n_judges following', () => {
    const on = applyJudgeSwitches(config({ n_judges: 1 }), { inBrowser: true, remotes: [remote] });
    expect(on.judge.judges).toEqual([
      { type: 'rule', id: 'rule' },
      IN_BROWSER_JUDGE,
      expect.objectContaining({ type: 'remote', id: 'gpt', api_key_env: 'secret.gpt' }),
    ]);
    expect(on.judge.n_judges).toBe(3);
    // The result is itself a valid config, and applying the same switches again changes nothing.
    expect(validateRunConfig(on).errors).toEqual([]);
    expect(applyJudgeSwitches(on, { inBrowser: true, remotes: [remote] })).toBe(on);
  });

  it('names no key for a remote judge saved without one (a local server)', () => {
    const on = applyJudgeSwitches(config(), { inBrowser: false, remotes: [{ ...remote, hasKey: false }] });
    expect(on.judge.judges[1]).toMatchObject({ id: 'gpt', api_key_env: null });
  });

  it('removes judges switched off and leaves the ones it does not manage alone', () => {
    const on = applyJudgeSwitches(config(), { inBrowser: true, remotes: [remote] });
    const off = applyJudgeSwitches(on, { inBrowser: false, remotes: [{ ...remote, enabled: false }] });
    expect(off.judge.judges).toEqual([{ type: 'rule', id: 'rule' }]);
    expect(off.judge.n_judges).toBeNull();
  });

  it('keeps a judge entry the config already has as written', () => {
    const written = config({
      judges: [
        { type: 'rule', id: 'rule' },
        { type: 'remote', id: 'gpt', base_url: 'http://localhost:8000/v1', model: 'local' },
      ],
    });
    expect(applyJudgeSwitches(written, { inBrowser: false, remotes: [remote] })).toBe(written);
  });
});

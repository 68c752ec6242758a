/** The config the app writes runs in the CLI, and the configs the CLI writes load in the app: one format. */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { presetConfig } from '../../src/config/presets.ts';
import { parseRunConfigYaml, setConfigValue, stringifyRunConfig } from '../../src/config/yaml.ts';
import { listEnvironments } from '../../src/envs/registry.ts';
import { openFileStore } from '../../src/store/file-store.ts';
import { listRuns } from '../../src/store/index.ts';
import { cli, tempDir } from './helpers.ts';

const known = { knownEnvironments: listEnvironments().map((e) => e.name) };

describe('one config format for the app and the CLI', () => {
  it('a config written by the app (stringifyRunConfig + setConfigValue) runs in `spindle collect` unchanged', async () => {
    const dir = tempDir();
    const app = presetConfig('demo');
    app.tasks.environments = ['letter_count', 'text_reverse'];
    app.sampling.max_new_tokens = 32;
    let text = stringifyRunConfig(app);
    text = setConfigValue(text, 'reward_scale', '2.5', known);
    writeFileSync(join(dir, 'app.yaml'), text);
    expect(await cli(dir, 'config', 'check', '--config', 'app.yaml')).toMatchObject({ code: 0, out: 'app.yaml: ok' });
    const r = await cli(
      dir,
      'collect',
      '--config',
      'app.yaml',
      '--policy',
      'expert',
      '--groups',
      '2',
      '--name',
      'from-app',
    );
    expect(r.code).toBe(0);
    const store = await openFileStore(join(dir, '.spindle'));
    const [run] = await listRuns(store);
    await store.close();
    expect(run.config).toEqual({ ...app, name: 'from-app', training: { ...app.training, reward_scale: 2.5 } });
  });

  it("configs written by the CLI (config init / set, transfer init) load in the app's parser and round-trip", async () => {
    const dir = tempDir();
    await cli(dir, 'config', 'init', '--preset', 'demo');
    await cli(dir, 'config', 'set', 'reward_scale', '2.5');
    await cli(dir, 'config', 'set', 'tasks.environments', '[countdown]');
    const parsed = parseRunConfigYaml(readFileSync(join(dir, 'spindle.yaml'), 'utf8'), known);
    expect(parsed.errors).toEqual([]);
    const expected = presetConfig('demo');
    expected.training.reward_scale = 2.5;
    expected.tasks.environments = ['countdown'];
    expect(parsed.config).toEqual(expected);
    expect(parseRunConfigYaml(stringifyRunConfig(parsed.config!)).config).toEqual(expected);

    const init = await cli(
      dir,
      'transfer',
      'init',
      '--source-env',
      'shell_exec',
      '--target-env',
      'git_repo',
      '--freeze-layers',
      '0-2',
      '--source',
      'adapter.zip',
      '--output',
      'transfer.yaml',
    );
    expect(init.code).toBe(0);
    const transfer = parseRunConfigYaml(readFileSync(join(dir, 'transfer.yaml'), 'utf8'), known).config!;
    expect(transfer).toMatchObject({
      tasks: { environments: ['git_repo'] },
      lora: { freeze_layers: '0-2' },
      transfer: { source_checkpoint: 'adapter.zip', learning_rate_scale: 0.3 },
    });
  });
});

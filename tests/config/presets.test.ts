/** Presets: applied to a config being edited they change exactly the settings they name; from the defaults they give `config init --preset`'s config. */
import { describe, expect, it } from 'vitest';
import { PRESETS, applyPresetToYaml, presetConfig, presetSettings } from '../../src/config/presets.ts';
import { DEFAULT_CONFIG } from '../../src/config/schema.ts';
import { parseRunConfigYaml, stringifyRunConfig } from '../../src/config/yaml.ts';

const at = (config: unknown, path: string) =>
  path.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], config);

describe('presets', () => {
  for (const name of Object.keys(PRESETS)) {
    it(`${name}: on the defaults it gives the preset's config; on an edited config it sets only what it names`, () => {
      expect(parseRunConfigYaml(applyPresetToYaml(stringifyRunConfig(DEFAULT_CONFIG), name)).config).toEqual(
        presetConfig(name),
      );
      const edited = structuredClone(DEFAULT_CONFIG);
      edited.judge.judges = [...edited.judge.judges, { type: 'model', id: 'onnx-judge', path: 'models/judge' }];
      edited.sampling.top_p = 0.9;
      edited.model.base_model = 'hf:test-org/tiny';
      const text = applyPresetToYaml(`# kept\n${stringifyRunConfig(edited)}`, name);
      expect(text.startsWith('# kept\n')).toBe(true);
      const applied = parseRunConfigYaml(text).config!;
      const named = presetSettings(name);
      for (const [path, value] of named) expect(at(applied, path), path).toEqual(value);
      // Every other setting, the judges among them, is the edited config's.
      const strip = (c: object) => {
        const copy = structuredClone(c) as Record<string, unknown>;
        for (const [path] of named) {
          const keys = path.split('.');
          delete keys.slice(0, -1).reduce<Record<string, unknown>>((o, k) => o[k] as Record<string, unknown>, copy)[
            keys.at(-1)!
          ];
        }
        return copy;
      };
      expect(strip(applied)).toEqual(strip(edited));
    });
  }

  it('names each leaf setting once, lists as values', () => {
    expect(presetSettings('watch-it-learn')).toEqual(
      expect.arrayContaining([
        ['tasks.difficulty_range', [3, 3]],
        ['curriculum.enabled', false],
        ['training.group_size', 8],
      ]),
    );
    expect(() => presetSettings('nope')).toThrow(/Unknown preset "nope"/);
    expect(() => applyPresetToYaml('training: [', 'demo')).toThrow(/not valid YAML/);
  });
});

import { describe, expect, it } from 'vitest';
import { parseSkill, renderSkill, skillFromTrajectory, skillsToInstructions, mergeJsonl, skillBody } from '../../src/export/skills.ts';
import { ImportError } from '../../src/export/import-error.ts';
import { makeTrajectory } from '../store/fixtures.ts';

describe('skill documents', () => {
  it('creates a skill from a successful trajectory: steps become a numbered procedure', () => {
    const t = makeTrajectory({ task_description: 'What is 3 + 2?' });
    const skill = skillFromTrajectory(t, { now: new Date('2025-01-02T03:04:05Z') });
    expect(skill).toMatchObject({ usage_count: 0, success_rate: 1, created: '2025-01-02T03:04:05.000Z' });
    expect(skill.name).toMatch(/^arith-tool-what-is-3-2/);
    const body = skillBody(skill);
    expect(body).toContain('## Procedure');
    expect(body).toContain('1. Call `calculator` with `{"expression":');
    expect(body).toContain('2. Give the final answer.');
    expect(() => skillFromTrajectory(makeTrajectory({ success: false }))).toThrow(/did not succeed/);
  });

  it('parses and renders front matter; a round trip keeps fields and body', () => {
    const skill = skillFromTrajectory(makeTrajectory(), { name: 'add', description: 'Add numbers: with a colon' });
    const parsed = parseSkill(skill.markdown, 'add.md');
    expect(parsed).toEqual(skill);
    const used = { ...parsed, usage_count: 6, success_rate: 5 / 6 };
    const again = parseSkill(renderSkill(used), 'add.md');
    expect(again).toMatchObject({ name: 'add', description: 'Add numbers: with a colon', usage_count: 6, success_rate: 0.833 });
    expect(skillBody(again)).toBe(skillBody(skill));
  });

  it('refuses malformed documents, naming the field', () => {
    expect(() => parseSkill('# no front matter', 'a.md')).toThrow(ImportError);
    expect(() => parseSkill('---\nname: x\ndescription: y\nusage_count: -1\n---\n', 'b.md')).toThrow(/b\.md: field usage_count: usage_count must be a whole number/);
    expect(() => parseSkill('---\nname: [\n---\n', 'c.md')).toThrow(/c\.md: front matter is not valid YAML/);
  });

  it('skill_to_instruction keeps skills used at least N times (5 by default)', () => {
    const base = skillFromTrajectory(makeTrajectory(), { name: 's', description: 'Add numbers' });
    const rows = skillsToInstructions([{ ...base, name: 'rare', usage_count: 4 }, { ...base, name: 'often', usage_count: 5 }]);
    expect(rows.map((r) => r.source)).toEqual(['skill:often']);
    expect(rows[0].messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(rows[0].messages[1].content).toContain('## Procedure');
    expect(skillsToInstructions([{ ...base, usage_count: 2 }], { minUsage: 2, system: 'sys' })[0].messages[0]).toEqual({ role: 'system', content: 'sys' });
  });

  it('merges JSONL files into one deduplicated dataset, validating all files first', () => {
    const a = '{"messages":[{"role":"user","content":"1"}]}\n{"messages":[{"role":"user","content":"2"}]}\n';
    const b = '{"messages":[{"role":"user","content":"2"}],"score":1}\n{"messages":[{"role":"user","content":"3"}]}\n';
    const merged = mergeJsonl([{ name: 'a.jsonl', data: a }, { name: 'b.jsonl', data: b }]);
    expect(merged).toMatchObject({ rows: 3, duplicates: 1 });
    expect(merged.jsonl.trim().split('\n').map((l) => JSON.parse(l).messages[0].content)).toEqual(['1', '2', '3']);
    expect(() => mergeJsonl([{ name: 'a.jsonl', data: a }, { name: 'bad.jsonl', data: '[1]\n' }])).toThrow(/bad\.jsonl: row 1: each line must be a JSON object/);
  });
});

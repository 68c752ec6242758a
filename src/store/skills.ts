/** Skill documents (Markdown with front matter); parsing and rendering live in src/export/skills.ts. */
import { write, type Store } from './db.ts';
import type { SkillRecord } from './records.ts';

export async function putSkill(store: Store, skill: SkillRecord): Promise<void> {
  await write(store, ['skills'], `skill ${skill.name}`, async (tx) => {
    await tx.objectStore('skills').put(skill);
  });
}

export async function getSkill(store: Store, name: string): Promise<SkillRecord | undefined> {
  return store.db.get('skills', name);
}

/** All skills, most used first. */
export async function listSkills(store: Store): Promise<SkillRecord[]> {
  return (await store.db.getAllFromIndex('skills', 'usage_count')).reverse();
}

export async function deleteSkill(store: Store, name: string): Promise<void> {
  await write(store, ['skills'], `the deletion of skill ${name}`, async (tx) => {
    await tx.objectStore('skills').delete(name);
  });
}

/**
 * Counts one use of a skill and folds its outcome into `success_rate`, in one transaction.
 * `render` rewrites the Markdown so its front matter matches (src/export/skills.ts `renderSkill`).
 */
export async function recordSkillUse(
  store: Store,
  name: string,
  success: boolean,
  render?: (s: SkillRecord) => string,
): Promise<SkillRecord> {
  return write(store, ['skills'], `the use count of skill ${name}`, async (tx) => {
    const skill = await tx.objectStore('skills').get(name);
    if (!skill) throw new Error(`no skill named ${name}`);
    const usage_count = skill.usage_count + 1;
    const success_rate = (skill.success_rate * skill.usage_count + (success ? 1 : 0)) / usage_count;
    let updated: SkillRecord = { ...skill, usage_count, success_rate };
    if (render) updated = { ...updated, markdown: render(updated) };
    await tx.objectStore('skills').put(updated);
    return updated;
  });
}

// A multi-step world with its own stateful tools: follow a chain of notes to a box's code, unlock the
// box, report what is inside. Level L hides the code behind L notes, each naming the next; the box
// locks for good after three wrong codes. Load it with `spindle envs add examples/envs/treasure-hunt.js`
// or on the Environments screen. It runs in Spindle's QuickJS sandbox: plain JavaScript, no imports.

const WORDS = ['amber', 'basil', 'cedar', 'delta', 'ember', 'fjord', 'garnet', 'harbor', 'indigo', 'juniper', 'kestrel', 'lantern'];
const LETTERS = 'abcdefghjkmnpqrstuvwxyz';

function noteId(rng) {
  let id = 'n';
  for (let i = 0; i < 3; i++) id += LETTERS[rng.int(0, LETTERS.length - 1)];
  return id;
}

export default {
  name: 'treasure_hunt',
  description: 'Follow a chain of notes to a code, unlock the box with it, and say what is inside.',
  tags: ['multi-step', 'example'],
  levels: [1, 2, 3, 4],
  instructions: 'Read notes with read_note, then unlock the box; answer with the word inside.',

  tools: {
    read_note: {
      description: 'Read the note with this id.',
      parameters: { id: { type: 'string', description: 'a note id like nabc' } },
      run({ id }, state, task) {
        const note = task.data.notes[String(id).trim()];
        if (note === undefined) throw new Error(`no note "${id}"; note ids look like ${task.data.first}`);
        state.read.push(String(id).trim());
        return note;
      },
    },
    unlock: {
      description: 'Try a code on the box; returns what is inside.',
      parameters: { code: { type: 'string', description: 'the four-digit code' } },
      run({ code }, state, task) {
        if (state.triesLeft === 0) throw new Error('the box is locked for good');
        if (String(code).trim() !== task.data.code) {
          state.triesLeft -= 1;
          throw new Error(`wrong code; ${state.triesLeft} tries left`);
        }
        state.opened = true;
        return `The box opens. Inside: ${task.data.prize}`;
      },
    },
  },

  init() {
    return { read: [], triesLeft: 3, opened: false };
  },

  sample(rng, level) {
    const ids = [];
    while (ids.length < level) {
      const id = noteId(rng);
      if (!ids.includes(id)) ids.push(id);
    }
    const code = String(rng.int(1000, 9999));
    const prize = rng.pick(WORDS);
    const notes = {};
    ids.forEach((id, i) => {
      notes[id] = i + 1 < ids.length ? `Go on to note ${ids[i + 1]}.` : `The code is ${code}.`;
    });
    return {
      prompt: `Start at note ${ids[0]}. Find the box's code, open the box and tell me what is inside.`,
      data: { first: ids[0], chain: ids, notes, code, prize },
      key: `${ids.join('>')}:${code}:${prize}`,
    };
  },

  // Success needs the box opened in this episode and the prize named; naming it without opening the
  // box (a lucky guess among 12 words) is no credit.
  evaluate(task, trajectory, state) {
    const answer = String(trajectory.final_response || '').toLowerCase();
    const named = answer.includes(task.data.prize);
    if (state.opened && named) return 1;
    if (state.opened) return 0.5;
    return 0;
  },

  expert(task) {
    const turns = task.data.chain.map((id) => ({ tool: 'read_note', args: { id }, think: `read ${id}` }));
    turns.push({ tool: 'unlock', args: { code: task.data.code } });
    turns.push(task.data.prize);
    return turns;
  },
};

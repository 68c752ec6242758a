import { describe, expect, it } from 'vitest';
import { GuestClock, LONG_OP_MS, MAX_GAP_MS, WALL_FACTOR } from '../../src/sandbox/guest-clock.ts';

/** A clock whose time moves only when the test says. */
function manual() {
  let t = 1000;
  return {
    now: () => t,
    advance: (ms: number) => {
      t += ms;
    },
  };
}

describe('GuestClock', () => {
  it('counts steady running time in full and expires at the budget', () => {
    const time = manual();
    const clock = new GuestClock(100, time.now);
    for (let i = 0; i < 99; i++) {
      time.advance(1);
      expect(clock.expired()).toBe(false);
    }
    time.advance(2);
    expect(clock.expired()).toBe(true);
    expect(clock.elapsed).toBe(101);
  });

  it('does not count waits for a core beyond one gap each', () => {
    const time = manual();
    const clock = new GuestClock(1000, time.now);
    time.advance(1);
    clock.expired();
    for (let i = 0; i < 10; i++) {
      time.advance(LONG_OP_MS); // descheduled ten times: longer than the whole budget in wall time, within the backstop
      expect(clock.expired()).toBe(false);
    }
    expect(clock.elapsed).toBe(1 + 10 * MAX_GAP_MS);
  });

  it('counts a gap longer than LONG_OP_MS in full: one built-in ran that long', () => {
    const time = manual();
    const clock = new GuestClock(1000, time.now);
    time.advance(LONG_OP_MS + 1);
    expect(clock.expired()).toBe(false);
    expect(clock.elapsed).toBe(LONG_OP_MS + 1);
    time.advance(800); // a second long built-in: past the budget, well within the wall backstop
    expect(clock.expired()).toBe(true);
  });

  it('stops at the wall-clock backstop when the machine is too starved to make progress', () => {
    const time = manual();
    const clock = new GuestClock(100, time.now);
    let checks = 0;
    while (!clock.expired()) {
      time.advance(50);
      checks++;
    }
    expect(clock.elapsed).toBeLessThan(100);
    expect(checks).toBe((100 * WALL_FACTOR) / 50 + 1);
  });
});

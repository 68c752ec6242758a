import { describe, expect, it } from 'vitest';
import { GuestClock, MAX_GAP_MS, WALL_FACTOR } from '../../src/sandbox/guest-clock.ts';

/** A clock whose time moves only when the test says. */
function manual() {
  let t = 1000;
  return { now: () => t, advance: (ms: number) => { t += ms; } };
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

  it('does not count a long wait for a core beyond one gap', () => {
    const time = manual();
    const clock = new GuestClock(1000, time.now);
    time.advance(1);
    clock.expired();
    time.advance(1500); // descheduled: longer than the whole budget in wall time, within the backstop
    expect(clock.expired()).toBe(false);
    expect(clock.elapsed).toBe(1 + MAX_GAP_MS);
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

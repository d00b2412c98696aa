/**
 * Growth bounds instead of clocks: how much longer a run on a larger input takes than on a smaller one. Linear is
 * the size ratio, quadratic its square; a test bounds the ratio between them, so it holds on a slow machine and
 * fails on a blow-up, where a bound in milliseconds does neither.
 */
import { PerformanceObserver, performance } from 'node:perf_hooks';

/**
 * How much longer `run(big)` takes than `run(small)`, counting only time outside the garbage collector:
 * collecting a large live set grows faster than the input on its own and says nothing about our algorithms.
 * The fastest of `runs` runs at each size (three by default), so one slow moment on a shared machine does not decide;
 * the two sizes alternate, so a stretch of contention (the suite's other workers on a two-core machine) slows both
 * alike instead of only the size measured during it.
 */
export async function growth(run: (n: number) => void, small: number, big: number, runs = 3): Promise<number> {
  const collections: { start: number; duration: number }[] = [];
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) collections.push({ start: entry.startTime, duration: entry.duration });
  });
  observer.observe({ entryTypes: ['gc'] });
  const mutatorTime = async (n: number): Promise<number> => {
    const started = performance.now();
    run(n);
    const ended = performance.now();
    await new Promise((resolve) => setTimeout(resolve, 0)); // gc entries arrive asynchronously
    const collecting = collections
      .filter((c) => c.start >= started && c.start < ended)
      .reduce((sum, c) => sum + c.duration, 0);
    collections.length = 0;
    return ended - started - collecting;
  };
  try {
    run(Math.ceil(small / 4));
    let bestSmall = Infinity;
    let bestBig = Infinity;
    for (let i = 0; i < runs; i++) {
      bestSmall = Math.min(bestSmall, await mutatorTime(small));
      bestBig = Math.min(bestBig, await mutatorTime(big));
    }
    return bestBig / Math.max(bestSmall, 1);
  } finally {
    observer.disconnect();
  }
}

/**
 * growth(), measured again (up to twice more) while it is at or above `bound`, the lowest kept: a test's other
 * workers on a small machine can slow one size for a moment, a blow-up is over the bound every time.
 */
export async function growthUnder(
  bound: number,
  run: (n: number) => void,
  small: number,
  big: number,
  runs = 5,
): Promise<number> {
  let lowest = await growth(run, small, big, runs);
  for (let again = 0; again < 2 && lowest >= bound; again++)
    lowest = Math.min(lowest, await growth(run, small, big, runs));
  return lowest;
}

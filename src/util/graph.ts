/** Graph algorithms over any nodes, iterative so that a long chain cannot overflow the stack. */

/**
 * The strongly connected component of every node reachable from `nodes` (Tarjan's algorithm), numbered in the
 * order components complete. One pass over the edges: asking "does this node reach back to its parent?" for every
 * node walked the rest of a chain each time.
 */
export function stronglyConnected<T>(nodes: Iterable<T>, edges: (node: T) => readonly T[]): Map<T, number> {
  const index = new Map<T, number>();
  const low = new Map<T, number>();
  const onStack = new Set<T>();
  const stack: T[] = [];
  const component = new Map<T, number>();
  let counter = 0;
  let count = 0;
  for (const start of nodes) {
    if (index.has(start)) continue;
    const frames: { node: T; out: readonly T[]; next: number }[] = [{ node: start, out: edges(start), next: 0 }];
    index.set(start, counter);
    low.set(start, counter++);
    stack.push(start);
    onStack.add(start);
    while (frames.length > 0) {
      const frame = frames.at(-1)!;
      if (frame.next < frame.out.length) {
        const to = frame.out[frame.next++]!;
        if (!index.has(to)) {
          index.set(to, counter);
          low.set(to, counter++);
          stack.push(to);
          onStack.add(to);
          frames.push({ node: to, out: edges(to), next: 0 });
        } else if (onStack.has(to)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(to)!));
        }
        continue;
      }
      frames.pop();
      const parent = frames.at(-1);
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(frame.node)!));
      if (low.get(frame.node) === index.get(frame.node)) {
        let member: T;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.set(member, count);
        } while (member !== frame.node);
        count++;
      }
    }
  }
  return component;
}

/**
 * The first k items of a list in an order, without sorting the list: a heap of the best k seen so
 * far whose root is the worst of them, so most items cost one comparison with the root.
 */
export class TopK {
  /** The first k of `items[0, length)`. */
  static of(
    items: Int32Array,
    length: number,
    k: number,
    compare: (a: number, b: number) => number,
  ): number[] {
    if (k <= 0) return [];
    if (length <= k * 4) return Array.from(items.subarray(0, length)).sort(compare).slice(0, k);
    const heap: number[] = [];
    // The root is the worst kept item: `worse(a, b)` when a comes after b.
    const worse = (a: number, b: number): boolean => compare(a, b) > 0;
    for (let i = 0; i < length; i++) {
      const item = items[i]!;
      if (heap.length < k) {
        heap.push(item);
        siftUp(heap, heap.length - 1, worse);
      } else if (worse(heap[0]!, item)) {
        heap[0] = item;
        siftDown(heap, 0, worse);
      }
    }
    return heap.sort(compare);
  }
}

function siftUp(heap: number[], index: number, worse: (a: number, b: number) => boolean): void {
  let i = index;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if (!worse(heap[i]!, heap[parent]!)) break;
    [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
    i = parent;
  }
}

function siftDown(heap: number[], index: number, worse: (a: number, b: number) => boolean): void {
  let i = index;
  for (;;) {
    const left = 2 * i + 1;
    const right = left + 1;
    let worst = i;
    if (left < heap.length && worse(heap[left]!, heap[worst]!)) worst = left;
    if (right < heap.length && worse(heap[right]!, heap[worst]!)) worst = right;
    if (worst === i) return;
    [heap[i], heap[worst]] = [heap[worst]!, heap[i]!];
    i = worst;
  }
}

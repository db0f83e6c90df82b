import { inParts } from './inParts';

async function partsOf(chunkSizes: number[], partSize: number) {
  const chunks = chunkSizes.map((size, index) => Buffer.alloc(size, index));
  const parts = [];
  for await (const { data, last } of inParts(chunks, partSize)) parts.push({ size: data.length, last });
  return parts;
}

describe('inParts', () => {
  test('groups chunks into parts of at least partSize, the remainder last', async () => {
    expect(await partsOf([4, 4, 4, 4, 3], 10)).toEqual([
      { size: 12, last: false },
      { size: 7, last: true },
    ]);
  });

  test('a body that fits in one part is a single last part', async () => {
    expect(await partsOf([3, 3], 10)).toEqual([{ size: 6, last: true }]);
  });

  test('an exact multiple ends with an empty last part, and an empty body is one empty part', async () => {
    expect(await partsOf([5, 5], 10)).toEqual([
      { size: 10, last: false },
      { size: 0, last: true },
    ]);
    expect(await partsOf([], 10)).toEqual([{ size: 0, last: true }]);
  });

  test('keeps the bytes in order', async () => {
    const chunks = [Buffer.from('abc'), Buffer.from('def'), Buffer.from('gh')];
    const data: string[] = [];
    for await (const part of inParts(chunks, 4)) data.push(part.data.toString());
    expect(data).toEqual(['abcdef', 'gh']);
  });
});

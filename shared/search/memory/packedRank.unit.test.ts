import { rankAndPacked } from './packedRank';
import { tsRank, wordEntryPos, type TsVectorEntry } from './tsRank';

/** A small deterministic generator: the same cases on every run. */
function generator(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

const LEXEMES = ['cortex', 'corpus', 'cor', 'hippo', 'hippocampus', 'mouse', 'motor', 'visual', 'v1'].sort();

test('calc_rank_and over a packed vector equals tsRank (held to PostgreSQL) on 20,000 random vectors and queries', () => {
  const random = generator(5);
  let compared = 0;
  for (let n = 0; n < 20_000; n++) {
    const entries: TsVectorEntry[] = LEXEMES.filter(() => random() < 0.5).map((lexeme) => ({
      lexeme,
      positions: [
        ...new Set(
          Array.from({ length: 1 + Math.floor(random() * 4) }, () => 1 + Math.floor(random() * 130)),
        ),
      ]
        .sort((a, b) => a - b)
        .map((position) => wordEntryPos(position, Math.floor(random() * 4))),
    }));
    if (entries.length === 0) continue;
    const operands = [
      ...new Set(
        Array.from({ length: 2 + Math.floor(random() * 2) }, () => {
          const word = LEXEMES[Math.floor(random() * LEXEMES.length)]!;
          return word.slice(0, 1 + Math.floor(random() * word.length));
        }),
      ),
    ].sort();
    if (operands.length < 2) continue;
    const arena: number[] = [];
    for (const [id, entry] of entries.entries()) arena.push(id, entry.positions.length, ...entry.positions);
    const masks = Uint32Array.from(entries, (entry) =>
      operands.reduce((bits, operand, i) => (entry.lexeme.startsWith(operand) ? bits | (1 << i) : bits), 0),
    );
    const stamps = new Int32Array(entries.length).fill(7);
    const packed = rankAndPacked(Int32Array.from(arena), 0, arena.length, operands.length, {
      masks,
      stamps,
      stamp: 7,
    });
    const expected = tsRank(
      entries,
      operands.map((lexeme) => ({ lexeme, prefix: true })),
    );
    expect(packed === undefined ? undefined : packed < 0 ? Math.fround(1e-20) : packed).toBe(expected);
    compared++;
  }
  expect(compared).toBeGreaterThan(10_000);
});

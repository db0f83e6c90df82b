import os from 'node:os';
import { describeSpread, describeTarget, verdict, type Figure } from './figure';

const say = (line = ''): void => void process.stdout.write(`${line}\n`);

export function printMachine(postgresVersion: string): void {
  const cpus = os.cpus();
  say(
    `machine: ${cpus.length} cores (${cpus[0]?.model.trim() ?? 'unknown cpu'}), ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM, ${os.platform()} ${os.release()}`,
  );
  say(`node ${process.version}, ${postgresVersion}`);
  printLoad('at the start');
}

/** The machine may be shared: its load beside the figures says how much of it the run had. */
export function printLoad(when: string): void {
  say(
    `load average ${when}: ${os
      .loadavg()
      .map((n) => n.toFixed(1))
      .join(', ')} (1, 5, 15 min)`,
  );
}

export function printSection(title: string): void {
  say();
  say(`== ${title}`);
}

export function printDetail(line: string): void {
  say(`   ${line}`);
}

/** One line per figure as soon as it is measured: every round, then median, target and verdict. */
export function printFigure(figure: Figure): void {
  const { median, range } = describeSpread(figure);
  const rounds = figure.rounds.map(figure.unit.format).join(', ');
  say(
    `   ${figure.name}: median ${median} (min–max ${range}; rounds ${rounds})  target ${describeTarget(figure)}  ${verdict(figure)}`,
  );
}

export function printSummary(figures: readonly Figure[]): void {
  const rows = figures.map((f) => {
    const { median, range } = describeSpread(f);
    return [f.name, median, range, describeTarget(f), verdict(f)];
  });
  const header = ['figure', 'median', 'min–max', 'target', 'result'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]): string =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  say();
  say('== summary (medians over rounds)');
  say(line(header));
  say(line(widths.map((w) => '-'.repeat(w))));
  for (const row of rows) say(line(row));
}

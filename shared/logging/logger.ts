import { stdoutSink } from './stdoutSink';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
export type LogFields = Record<string, unknown>;

/** Structured JSON logger: one line per call, with the fields given and those bound by child(). */
export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  isEnabled(level: LogLevel): boolean;
  child(fields: LogFields): Logger;
}

export interface LoggerOptions {
  readonly service: string;
  readonly level?: LogLevel;
  /** Receives each finished line (without newline). Defaults to a buffered stdout writer. */
  readonly sink?: (line: string) => void;
}

const SEVERITY: Readonly<Record<LogLevel, number>> = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 };

/** Errors do not survive JSON.stringify; keep what helps someone debugging. */
function serialise(_key: string, value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message, stack: value.stack };
  if (typeof value === 'bigint') return value.toString();
  return value;
}

class JsonLogger implements Logger {
  constructor(
    private readonly threshold: number,
    private readonly bound: LogFields,
    private readonly sink: (line: string) => void,
  ) {}

  debug(message: string, fields?: LogFields): void {
    this.write('debug', message, fields);
  }
  info(message: string, fields?: LogFields): void {
    this.write('info', message, fields);
  }
  warn(message: string, fields?: LogFields): void {
    this.write('warn', message, fields);
  }
  error(message: string, fields?: LogFields): void {
    this.write('error', message, fields);
  }
  isEnabled(level: LogLevel): boolean {
    return SEVERITY[level] >= this.threshold;
  }
  child(fields: LogFields): Logger {
    return new JsonLogger(this.threshold, { ...this.bound, ...fields }, this.sink);
  }

  private write(level: LogLevel, msg: string, fields: LogFields | undefined): void {
    if (SEVERITY[level] < this.threshold) return;
    const record = { time: new Date().toISOString(), level, msg, ...this.bound, ...fields };
    let line: string;
    try {
      line = JSON.stringify(record, serialise);
    } catch (error) {
      // A circular field must not turn a log call into a crash.
      line = JSON.stringify({ time: record.time, level, msg, ...this.bound, log_error: String(error) });
    }
    this.sink(line);
  }
}

export function createLogger(options: LoggerOptions): Logger {
  const threshold = SEVERITY[options.level ?? 'info'];
  return new JsonLogger(threshold, { service: options.service }, options.sink ?? stdoutSink());
}

/** A logger that drops everything (tests, benchmarks). */
export function createSilentLogger(): Logger {
  return createLogger({ service: 'silent', level: 'silent', sink: () => undefined });
}

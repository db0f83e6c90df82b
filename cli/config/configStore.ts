import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { CliError, ExitCode } from '#cli/exitCodes';

/** What `bic` remembers between runs. The token is a secret: the file is 0600 in a 0700 directory. */
export interface StoredConfig {
  server?: string;
  token?: string;
  /** The token's UUID when bic created it (login): logout revokes it by id. */
  token_id?: string;
  token_name?: string;
}

/** BIC_CONFIG_DIR, else $XDG_CONFIG_HOME/bic, else ~/.config/bic. */
export function configDir(env: NodeJS.ProcessEnv): string {
  if (env.BIC_CONFIG_DIR) return path.resolve(env.BIC_CONFIG_DIR);
  const base = env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : undefined;
  return path.join(base ?? path.join(homedir(), '.config'), 'bic');
}

export class ConfigStore {
  readonly file: string;

  constructor(readonly dir: string) {
    this.file = path.join(dir, 'config.json');
  }

  async read(): Promise<StoredConfig> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
      throw error;
    }
    try {
      const parsed: unknown = JSON.parse(text);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed;
    } catch {
      // reported below
    }
    throw new CliError(`${this.file} is not a JSON object: fix or delete it`, ExitCode.failure);
  }

  /** Writes the whole config atomically (temp file + rename), never readable by others. */
  async write(config: StoredConfig): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    await chmod(this.dir, 0o700); // an existing directory may have been created with a looser mode
    const temp = `${this.file}.${process.pid}.tmp`;
    try {
      await writeFile(temp, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
      await chmod(temp, 0o600);
      await rename(temp, this.file);
    } finally {
      await rm(temp, { force: true });
    }
  }

  async update(change: (config: StoredConfig) => StoredConfig): Promise<void> {
    await this.write(change(await this.read()));
  }
}

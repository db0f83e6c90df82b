import { loadConfig } from '#shared/config/config';
import { createLogger } from '#shared/logging/logger';
import { openInfrastructure } from '#shared/platform/openInfrastructure';
import { IdAllocator } from '#shared/commandHandling/allocateId';
import { createPasswordHasher } from '#shared/auth/passwords';
import { systemContext } from '#shared/commandHandling/commandContext';
import { ensureStaffAccount } from './features/accounts/ensureStaffAccount';

const USAGE =
  'usage: npm run admin -- create-staff --email <email> --password <password> [--username <name>]';

/** `npm run admin -- create-staff ...`: the command-line way to grant staff (no HTTP endpoint does). */
async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  const flags = new Map<string, string>();
  for (let i = 0; i + 1 < rest.length; i += 2) flags.set(rest[i]!.replace(/^--/, ''), rest[i + 1]!);
  const email = flags.get('email');
  const password = flags.get('password');
  if (command !== 'create-staff' || !email || !password || password.length < 8) {
    process.stderr.write(`${USAGE}\n(password: at least 8 characters)\n`);
    process.exit(2);
  }
  const config = loadConfig(process.env);
  const logger = createLogger({ service: 'admin', level: 'warn' });
  const infra = await openInfrastructure(config, logger);
  try {
    const result = await ensureStaffAccount(
      {
        store: infra.store,
        ids: new IdAllocator(infra.store),
        passwords: createPasswordHasher(config.passwordHashLogN),
        now: () => new Date(),
        logger,
      },
      { email, password, username: flags.get('username') ?? email.split('@')[0]! },
      systemContext('admin-command'),
    );
    process.stdout.write(
      `${result.created ? 'created' : 'updated'} staff user ${result.userId} <${email}>\n`,
    );
  } finally {
    await infra.close();
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(`admin failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});

import { randomBytes } from 'node:crypto';
import type { LoadLedger, RegisteredAccount } from './loadLedger';
import { callApi, type CallOptions, type CallResult } from './unreliableHttp';
import { brainForm, nifti } from '#tests/e2e/brains/brainFixtures';

interface Session {
  readonly account: RegisteredAccount;
  readonly token: string;
  /** This session's acknowledged personal tokens that are not revoked yet. */
  readonly tokens: string[];
  /** A logout went unanswered: the token may be revoked, so a 401 is no surprise. */
  maybeLoggedOut: boolean;
}

export interface LoadClientOptions {
  /**
   * Statuses meaning "not now, try later" (503 while a dependency is down): like a call without an
   * answer, the write is not acknowledged and may or may not have happened, and the client backs off.
   * Any other unexpected status still goes into the ledger as unexpected.
   */
  readonly retryLaterStatuses?: ReadonlySet<number>;
  /**
   * With a species id, sessions also create atlases of it and brains in those atlases, which they
   * then update (name, description, atlas) and delete (catalogue writes in the mix).
   */
  readonly atlasSpeciesId?: number;
}

type Outcome = { readonly ok: true; readonly body: unknown } | { readonly ok: false };

/**
 * One user of the service doing a random mix of writes, one request at a time: registrations,
 * logins, token creation and revocation, profile updates, logouts. Everything it is told goes into
 * the shared ledger; a request lost to a crash is simply not counted on.
 */
export class LoadClient {
  private pendingLogin: RegisteredAccount | undefined;
  private session: Session | undefined;
  private serial = 0;
  /** Atlases this client created (any user may file brains in any atlas). */
  private readonly atlasIds: number[] = [];
  /** Live brains per uploader (only the uploader or staff may change one). */
  private readonly brainsOf = new Map<number, number[]>();
  /** The last request got no answer (or was told to retry later): the service is down or restarting. */
  lastCallUnreachable = false;

  constructor(
    private readonly baseUrl: string,
    private readonly name: string,
    private readonly ledger: LoadLedger,
    private readonly options: LoadClientOptions = {},
  ) {}

  async step(): Promise<void> {
    const s = this.session;
    if (!s) return this.pendingLogin ? this.login(this.pendingLogin) : this.register();
    const roll = Math.random();
    if (roll < 0.15) return this.register();
    if (roll < 0.4) return this.createToken(s);
    if (roll < 0.55) return this.revokeToken(s);
    // With catalogue writes, some of the profile updates' share goes to them.
    if (roll < (this.options.atlasSpeciesId ? 0.7 : 0.8)) return this.updateProfile(s);
    if (roll < 0.93)
      return this.options.atlasSpeciesId
        ? this.catalogueWrite(s, this.options.atlasSpeciesId)
        : this.updateProfile(s);
    return this.logout(s);
  }

  private async register(): Promise<void> {
    const handle = `${this.name}_${++this.serial}`;
    const password = randomBytes(9).toString('base64url');
    const email = `${handle}@crash.example.org`;
    const body = {
      email,
      username: handle,
      password,
      password_confirm: password,
      first_name: 'Load',
      last_name: handle,
    };
    const outcome = await this.expect(201, 'POST', '/api/auth/register/', { body });
    if (!outcome.ok) return;
    const account = { userId: (outcome.body as { id: number }).id, email, password };
    this.ledger.registered.push(account);
    this.ledger.possibleBios.set(account.userId, ['']);
    this.session = undefined;
    this.pendingLogin = account;
  }

  private async login(account: RegisteredAccount): Promise<void> {
    const outcome = await this.expect(200, 'POST', '/api/auth/login/', {
      body: { email: account.email, password: account.password },
    });
    if (outcome.ok)
      this.session = {
        account,
        token: (outcome.body as { token: string }).token,
        tokens: [],
        maybeLoggedOut: false,
      };
    else if (!this.lastCallUnreachable) this.pendingLogin = undefined; // refused for good: start over
  }

  private async createToken(s: Session): Promise<void> {
    const outcome = await this.expect(
      201,
      'POST',
      '/api/tokens/',
      { token: s.token, body: { name: `load ${this.serial}` } },
      s,
    );
    if (!outcome.ok) return;
    const id = (outcome.body as { id: string }).id;
    this.ledger.issuedTokens.set(id, s.account.userId);
    s.tokens.push(id);
  }

  private async revokeToken(s: Session): Promise<void> {
    const id = s.tokens[Math.floor(Math.random() * s.tokens.length)];
    if (id === undefined) return this.createToken(s);
    const outcome = await this.expect(204, 'DELETE', `/api/tokens/${id}/`, { token: s.token }, s);
    if (!outcome.ok) return;
    this.ledger.revokedTokens.add(id);
    s.tokens.splice(s.tokens.indexOf(id), 1);
  }

  private async updateProfile(s: Session): Promise<void> {
    const bio = `bio ${randomBytes(6).toString('hex')}`;
    const possible = this.ledger.possibleBios.get(s.account.userId)!;
    possible.push(bio); // until acknowledged, it may or may not be applied
    const outcome = await this.expect(200, 'PATCH', '/api/profile/', { token: s.token, body: { bio } }, s);
    if (outcome.ok) this.ledger.possibleBios.set(s.account.userId, [bio]);
  }

  private async createAtlas(s: Session, speciesId: number): Promise<void> {
    // Names repeat across clients on purpose: slugs must stay unique under concurrent creates.
    const name = `Load atlas ${this.serial++ % 5}`;
    const outcome = await this.expect(
      201,
      'POST',
      '/api/atlases/',
      { token: s.token, body: { name, species: speciesId } },
      s,
    );
    if (!outcome.ok) return;
    const atlas = outcome.body as { id: number; slug: string };
    this.ledger.createdAtlases.set(atlas.slug, speciesId);
    this.atlasIds.push(atlas.id);
  }

  private catalogueWrite(s: Session, speciesId: number): Promise<void> {
    const mine = this.brainsOf.get(s.account.userId) ?? [];
    const roll = Math.random();
    if (this.atlasIds.length === 0 || roll < 0.25) return this.createAtlas(s, speciesId);
    if (mine.length === 0 || roll < 0.6) return this.createBrain(s);
    const brainId = mine[Math.floor(Math.random() * mine.length)]!;
    return roll < 0.85 ? this.updateBrain(s, brainId) : this.deleteBrain(s, brainId);
  }

  private pickAtlas(): number {
    return this.atlasIds[Math.floor(Math.random() * this.atlasIds.length)]!;
  }

  private async createBrain(s: Session): Promise<void> {
    const body = brainForm(
      { name: `Load brain ${this.serial++ % 7}`, atlas: this.pickAtlas(), description: 'cortex sample' },
      nifti(),
    );
    const outcome = await this.expect(201, 'POST', '/api/brains/', { token: s.token, body }, s);
    if (!outcome.ok) return;
    const brain = outcome.body as { id: number; readable_id: string };
    this.ledger.createdBrains.set(brain.id, brain.readable_id);
    this.brainsOf.set(s.account.userId, [...(this.brainsOf.get(s.account.userId) ?? []), brain.id]);
  }

  private async updateBrain(s: Session, brainId: number): Promise<void> {
    const body = {
      name: `Load brain ${randomBytes(3).toString('hex')}`,
      description: `hippocampus ${this.serial++}`,
      atlas: this.pickAtlas(),
    };
    await this.expect(200, 'PATCH', `/api/brains/${brainId}/`, { token: s.token, body }, s);
  }

  private async deleteBrain(s: Session, brainId: number): Promise<void> {
    const outcome = await this.expect(204, 'DELETE', `/api/brains/${brainId}/`, { token: s.token }, s);
    // Unanswered, it may have happened: the brain is not used again either way.
    if (outcome.ok) this.ledger.deletedBrains.add(brainId);
    else this.ledger.maybeDeletedBrains.add(brainId);
    const mine = this.brainsOf.get(s.account.userId) ?? [];
    this.brainsOf.set(
      s.account.userId,
      mine.filter((id) => id !== brainId),
    );
  }

  private async logout(s: Session): Promise<void> {
    const outcome = await this.expect(200, 'POST', '/api/auth/logout/', { token: s.token }, s);
    if (outcome.ok) this.session = undefined;
    else s.maybeLoggedOut = true;
    this.pendingLogin = s.account;
  }

  /** One request; anything but `status` or no answer at all goes into the ledger as unexpected. */
  private async expect(
    status: number,
    method: string,
    path: string,
    options: CallOptions,
    s?: Session,
  ): Promise<Outcome> {
    const result = await callApi(this.baseUrl, method, path, options);
    const { statuses } = this.ledger;
    statuses.set(result.status, (statuses.get(result.status) ?? 0) + 1);
    const retryLater =
      result.status !== 'unreachable' && (this.options.retryLaterStatuses?.has(result.status) ?? false);
    this.lastCallUnreachable = result.status === 'unreachable' || retryLater;
    if (result.status === status) {
      this.ledger.acknowledged++;
      return { ok: true, body: result.body };
    }
    if (result.status === 'unreachable') this.ledger.unreachable++;
    else if (!retryLater) this.noteFailure(method, path, result, s);
    return { ok: false };
  }

  private noteFailure(
    method: string,
    path: string,
    result: CallResult & { status: number },
    s: Session | undefined,
  ): void {
    if (result.status === 401 && s) {
      this.session = undefined;
      this.pendingLogin = s.account;
      if (s.maybeLoggedOut) return;
    }
    this.ledger.unexpected.push(`${method} ${path} → ${result.status} ${JSON.stringify(result.body)}`);
  }
}

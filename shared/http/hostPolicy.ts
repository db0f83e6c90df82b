import { hostname as machineHostname } from 'node:os';
import { isIPv4 } from 'node:net';
import type { Request, RequestHandler } from 'express';
import { BadRequestError } from '#shared/errors/httpErrors';

export interface HostPolicyOptions {
  /** Base of every emitted link when set ("https://api.example.org"); the Host header is then unused. */
  readonly publicBaseUrl?: string;
  /**
   * Host names this service answers to (Django's ALLOWED_HOSTS): "api.example.org", ".example.org"
   * (the domain and its subdomains), "*" (any). When set, API requests naming another host are 400.
   */
  readonly allowedHosts?: readonly string[];
}

/** Django's host syntax: a name or IPv4 address, or a bracketed IPv6 address; optional port. */
const HOST = /^([a-z0-9.-]+|\[[a-f0-9]*:[a-f0-9.:]+\])(:[0-9]{1,5})?$/i;

export const INVALID_HOST = 'Invalid Host header.';

/** "Api.Example.org.:8000" → "api.example.org"; undefined when the header is not a host at all. */
export function hostnameOf(host: string | undefined): string | undefined {
  const match = host === undefined ? null : HOST.exec(host);
  return match?.[1]?.toLowerCase().replace(/\.$/, '');
}

/** Whether a host name matches one allow-list entry (exact, ".domain" for it and its subdomains, or "*"). */
export function hostMatches(name: string, pattern: string): boolean {
  const entry = pattern.toLowerCase();
  if (entry === '*') return true;
  if (entry.startsWith('.')) return name === entry.slice(1) || name.endsWith(entry);
  return name === entry;
}

/** Names that can only mean this machine: trusting them cannot send a link anywhere else. */
function isOwnName(name: string): boolean {
  if (name === 'localhost' || name === '[::1]') return true;
  if (isIPv4(name) && name.startsWith('127.')) return true;
  return name === machineHostname().toLowerCase();
}

/** The address the client reached this server on, as a URL host ("10.0.0.5:8000", "[fd00::1]:8000"). */
function socketHost(req: Request): string {
  const address = (req.socket.localAddress ?? '127.0.0.1').replace(/^::ffff:(?=\d+\.)/, '');
  const host = address.includes(':') ? `[${address}]` : address;
  return req.socket.localPort ? `${host}:${req.socket.localPort}` : host;
}

const DEFAULT_PORTS: Readonly<Record<string, string>> = { http: '80', https: '443' };

/**
 * The request's host (Express: X-Forwarded-Host from a trusted proxy, else Host), with the port of
 * X-Forwarded-Port when a trusted proxy forwarded a host without one: proxies that send the name
 * alone (nginx's `$host`, load balancers) would otherwise make every link lose the port the
 * client used. A port the host already names wins; the protocol's default port is left out.
 */
function withForwardedPort(req: Request): string | undefined {
  const host = req.host;
  const forwardedPort = firstValue(req.get('x-forwarded-port'));
  if (host === undefined || forwardedPort === undefined || /:\d+$/.test(host)) return host;
  if (!/^\d{1,5}$/.test(forwardedPort) || !fromTrustedProxy(req)) return host;
  return DEFAULT_PORTS[req.protocol] === forwardedPort ? host : `${host}:${forwardedPort}`;
}

function firstValue(header: string | undefined): string | undefined {
  const value = header?.split(',')[0]?.trim();
  return value === '' ? undefined : value;
}

/** Express's own test for forwarded headers: the peer is a proxy TRUST_PROXY trusts. */
function fromTrustedProxy(req: Request): boolean {
  const trust = req.app.get('trust proxy fn') as ((address: string, hop: number) => boolean) | undefined;
  return trust?.(req.socket.remoteAddress ?? '', 0) === true;
}

/**
 * Where the links the service emits point, without trusting what a client says the host is
 * (host-header poisoning): PUBLIC_BASE_URL when set; else the request's host when ALLOWED_HOSTS
 * lists it; else, with no allow-list, the request's host only when it names this machine
 * (localhost, 127.0.0.0/8, [::1], the machine's hostname), and otherwise the address the request
 * arrived on.
 */
export class HostPolicy {
  private readonly publicBaseUrl: string | undefined;
  private readonly allowedHosts: readonly string[] | undefined;

  constructor(options: HostPolicyOptions) {
    this.publicBaseUrl = options.publicBaseUrl?.replace(/\/+$/, '');
    this.allowedHosts = options.allowedHosts?.length ? options.allowedHosts : undefined;
  }

  /** With an allow-list: whether the request names a listed host. Without one every host is served. */
  accepts(req: Request): boolean {
    if (!this.allowedHosts) return true;
    const name = hostnameOf(req.host);
    return name !== undefined && this.allowedHosts.some((pattern) => hostMatches(name, pattern));
  }

  baseUrlOf(req: Request): string {
    if (this.publicBaseUrl) return this.publicBaseUrl;
    const host = withForwardedPort(req);
    const name = hostnameOf(host);
    const trusted =
      host !== undefined && name !== undefined && (this.allowedHosts ? this.accepts(req) : isOwnName(name));
    return `${req.protocol}://${trusted ? host : socketHost(req)}`;
  }

  /** 400 {"detail": "Invalid Host header."} for a host outside the allow-list (none without one). */
  guard(): RequestHandler {
    return (req, _res, next) => {
      next(this.accepts(req) ? undefined : new BadRequestError(INVALID_HOST));
    };
  }
}

/**
 * An answer tus sends as it is (its handlers read `status_code` and `body`): our errors carry a
 * JSON body in the DRF shape, {"detail": "..."} or {"field": ["..."]}.
 */
export class TusHttpError extends Error {
  readonly body: string;

  constructor(
    readonly status_code: number,
    json: Record<string, unknown>,
  ) {
    super(typeof json.detail === 'string' ? json.detail : JSON.stringify(json));
    this.name = 'TusHttpError';
    this.body = JSON.stringify(json);
  }
}

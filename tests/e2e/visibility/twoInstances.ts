import { type ApiResponse, type Client, client } from '#tests/support/httpClient';
import { type CuratedService, startCuratedService } from '#tests/support/curatedService';
import { type TestService, startTestService } from '#tests/support/testService';

/**
 * One database served by two instances without a processor (nothing writes but the test, so an
 * embargo ending is seen with no write): `a` keeps list answers and search rankings (the default),
 * `b` keeps none (LIST_CACHE_MB=0), unless both are asked to keep them.
 */
export interface TwoInstances {
  readonly a: CuratedService;
  readonly b: TestService;
  readonly instances: readonly { readonly name: string; readonly api: Client }[];
  close(): Promise<void>;
}

export async function startTwoInstances(options: { bothKeepAnswers?: boolean } = {}): Promise<TwoInstances> {
  const noProcessor = { PROCESSOR_ENABLED: 'false' };
  const a = await startCuratedService(noProcessor);
  const b = await startTestService(
    {
      ...noProcessor,
      ...(options.bothKeepAnswers ? {} : { LIST_CACHE_MB: '0' }),
      DATA_DIR: a.service.dataDir,
    },
    a.service.databaseUrl,
  );
  return {
    a,
    b,
    instances: options.bothKeepAnswers
      ? [
          { name: 'instance A', api: a.api },
          { name: 'instance B', api: client(b.url) },
        ]
      : [
          { name: 'the instance keeping answers', api: a.api },
          { name: 'the instance keeping none', api: client(b.url) },
        ],
    async close() {
      await b.close();
      await a.service.close();
    },
  };
}

/** The brain ids of a list answer, in its order (array or envelope mode). */
export const resultIds = (res: ApiResponse): number[] =>
  (Array.isArray(res.body) ? res.body : res.body.results).map((brain: { id: number }) => brain.id);

/** GET twice (the second may be a kept answer): both answers must be the same. */
export async function getTwice(api: Client, path: string, token: string | undefined): Promise<ApiResponse> {
  const first = await api.get(path, { token });
  const second = await api.get(path, { token });
  expect({ status: second.status, body: second.body }).toEqual({ status: first.status, body: first.body });
  expect(second.headers.get('x-total-count')).toBe(first.headers.get('x-total-count'));
  return second;
}

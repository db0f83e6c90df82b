import type { RouteSpec } from '../../../../shared/http/routeSpec';
import { NotFoundError } from '../../../../shared/errors/httpErrors';
import { sniffImage } from '../../../../shared/media/sniffImage';
import type { QueryDeps } from '../../queryDeps';

const SEGMENT = /^[A-Za-z0-9._-]{1,200}$/;

async function readHead(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks);
}

export const avatarRoute = (deps: QueryDeps): RouteSpec => ({
  method: 'get',
  path: '/media/avatars/{user_id}/{file_name}/',
  operationId: 'downloadAvatar',
  summary: 'An avatar image',
  tags: ['media'],
  auth: 'public',
  responses: { 200: { description: 'The image bytes' }, 404: { description: 'No such avatar' } },
  async handler(ctx) {
    const { user_id: userId = '', file_name: fileName = '' } = ctx.params;
    if (!/^\d{1,12}$/.test(userId) || !SEGMENT.test(fileName)) throw new NotFoundError();
    const key = `avatars/${userId}/${fileName}`;
    const info = await deps.blobs.stat(key);
    if (!info || info.size === 0) throw new NotFoundError();
    // Serve the type the bytes really have (checked on upload), not what the client claimed.
    const image = sniffImage(
      await readHead(await deps.blobs.get(key, { start: 0, end: Math.min(info.size, 65536) - 1 })),
    );
    return {
      status: 200,
      raw: await deps.blobs.get(key),
      headers: {
        'Content-Type': image?.mimeType ?? 'application/octet-stream',
        'Content-Length': String(info.size),
        'Cache-Control': 'public, max-age=31536000, immutable',
        'X-Content-Type-Options': 'nosniff',
      },
    };
  },
});

import { rm } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { streamIntoFile } from '#shared/blobStore/localDisk/writeBlobFile';
import { tuneHeapGrowth } from '#shared/runtime/heapGrowth';

/**
 * The least any upload endpoint must do with a body, for the upload bench to hold the service
 * against: a bare Node HTTP server that streams each POSTed body, as it arrives, into a file with
 * the local disk BlobStore's own streamIntoFile (batches, writes in flight, SHA-256 on the hashing
 * thread, fsync), and answers 201 with the hash. No framework, no multipart parsing, no authentication, no
 * event. Environment: PORT, DATA_DIR. GET /health/ answers 200.
 */
tuneHeapGrowth();
const port = Number(process.env.PORT);
const dataDir = process.env.DATA_DIR ?? '.';
let next = 0;

async function store(req: http.IncomingMessage): Promise<{ size: number; sha256: string }> {
  const file = path.join(dataDir, `bare-${process.pid}-${next++}.bin`);
  try {
    return await streamIntoFile(req, file, { directIo: true });
  } finally {
    await rm(file, { force: true });
  }
}

http
  .createServer((req, res) => {
    if (req.method !== 'POST') return void res.writeHead(200).end('{}');
    store(req).then(
      (stored) => res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify(stored)),
      (error: unknown) => res.writeHead(500).end(String(error)),
    );
  })
  .listen(port, '127.0.0.1');

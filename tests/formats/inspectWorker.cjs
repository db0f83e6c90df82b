// A worker thread as the processor runs one: TypeScript sources through tsx, one inspection per message.
require('tsx/cjs');
const { parentPort } = require('node:worker_threads');
const { fileByteSource } = require('../../shared/formats/fileByteSource.ts');
const { inspectUpload } = require('../../shared/formats/inspectUpload.ts');

parentPort.on('message', async (path) => {
  const result = await inspectUpload(await fileByteSource(path), path);
  parentPort.postMessage(
    result.ok ? { ok: true, format: result.metadata.format, preview: result.preview?.length ?? 0 } : result,
  );
});

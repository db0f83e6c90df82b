'use strict';
/**
 * PROCESSOR_INSPECTOR_MODULE of the cluster test (tests/deploy/cluster.e2e.test.ts): the real
 * inspector of the build (dist/shared/formats), except that a file named `slow-<ms>-…` is held
 * that long first, so the test can SIGKILL the processor while it holds the upload's claim.
 */
const path = require('node:path');
const { setTimeout: sleep } = require('node:timers/promises');

const real = require(path.resolve(__dirname, '../../dist/shared/formats/inspectUpload.js'));

exports.inspectUpload = async (source, filename, ...rest) => {
  const slow = /slow-(\d+)/.exec(filename);
  if (slow) await sleep(Number(slow[1]));
  return real.inspectUpload(source, filename, ...rest);
};

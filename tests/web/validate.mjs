#!/usr/bin/env node
// node tests/web/validate.mjs FILE.glb
//
// Runs the Khronos glTF validator (web/node_modules/gltf-validator) on FILE.glb and prints one JSON
// line: {"errors":N,"warnings":N,"infos":N,"hints":N,"messages":[first 20 issues]}, each issue as
// {code, message, pointer, severity} (severity 0 error, 1 warning, 2 info, 3 hint).
// Exit 0 when the validator ran (whatever it found; data it cannot recognise as glTF at all counts
// as one error, code VALIDATOR_REJECTED), 2 when FILE cannot be read.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';

const MAX_MESSAGES = 20;

// gltf-validator is CommonJS; loaded from web/node_modules relative to this script.
const require = createRequire(new URL('../../web/', import.meta.url));
const validator = require('gltf-validator');

function usage() {
  process.stderr.write('usage: node tests/web/validate.mjs FILE.glb\n');
  process.exit(2);
}

async function main() {
  const args = process.argv.slice(2);
  if (args.length !== 1) usage();
  const path = args[0];

  let bytes;
  try {
    bytes = new Uint8Array(await readFile(path));
  } catch (error) {
    process.stderr.write(`validate.mjs: ${path}: cannot read the file (${error.code || error.message})\n`);
    process.exit(2);
  }

  let issues;
  try {
    const report = await validator.validateBytes(bytes, {
      uri: path,
      maxIssues: 0,  // count everything; only the first MAX_MESSAGES are printed
      externalResourceFunction: (uri) => Promise.reject(new Error(`external resource ${uri}: a .glb needs none`)),
    });
    issues = report.issues;
  } catch (error) {
    // The validator rejects data it cannot even recognise as glTF (e.g. "could not detect glTF
    // format"): reported as one error so the output keeps its shape.
    const message = error && error.message ? error.message : String(error);
    process.stderr.write(`validate.mjs: ${path}: ${message}\n`);
    issues = { numErrors: 1, numWarnings: 0, numInfos: 0, numHints: 0,
      messages: [{ code: 'VALIDATOR_REJECTED', message, pointer: null, severity: 0 }] };
  }

  const summary = {
    errors: issues.numErrors,
    warnings: issues.numWarnings,
    infos: issues.numInfos,
    hints: issues.numHints,
    messages: issues.messages.slice(0, MAX_MESSAGES).map(({ code, message, pointer, severity }) =>
      ({ code, message, pointer: pointer ?? null, severity })),
  };
  process.stdout.write(`${JSON.stringify(summary)}\n`);
}

main();

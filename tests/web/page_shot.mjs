#!/usr/bin/env node
// node tests/web/page_shot.mjs PAGE.html OUT.png --width W --height H [--camera N]
//      [--press KEY --hold-ms MS --after OUT2.png] [--timeout-s S]
//
// Opens an `ibrr export --html` page in headless Chromium (/usr/bin/chromium, WebGL 2 through
// SwiftShader), waits for window.ibrr.ready, selects camera N (0-based) and saves the canvas to
// OUT.png. With --press it then holds KEY (a Playwright key name: "w", "KeyW", "Shift", …) down for
// MS milliseconds through the real keyboard API and saves the canvas again to OUT2.png.
//
// The PNGs are the canvas's drawing buffer (canvas.toDataURL; the page renders with
// preserveDrawingBuffer), W×H at device scale factor 1, without the HUD that lies over it.
// Prints one JSON line: {"loadSeconds", "frameMs", "camera", "renderer"}. On any failure (a page
// error, a console error, a timeout) prints one line naming PAGE to stderr and exits 1; usage
// errors exit 2. Page errors and console errors are forwarded to stderr as they come.
import { writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

// playwright-core is CommonJS; loaded from web/node_modules relative to this script.
const require = createRequire(new URL('../../web/', import.meta.url));
const { chromium } = require('playwright-core');

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--ignore-gpu-blocklist'];
const POLL_MS = 25;
const FRAME_WAIT_MS = 30000;  // two frames; SwiftShader is slow on large canvases, but not this slow

class UsageError extends Error {}

function parseArgs(argv) {
  const options = { camera: null, press: null, holdMs: null, after: null, timeoutS: 60 };
  const positional = [];
  const value = (i, name) => {
    if (i + 1 >= argv.length) throw new UsageError(`${name} needs a value`);
    return argv[i + 1];
  };
  const number = (text, name, min) => {
    const n = Number(text);
    if (!Number.isFinite(n) || n < min) throw new UsageError(`${name} must be a number ≥ ${min}, not "${text}"`);
    return n;
  };
  for (let i = 0; i < argv.length; ++i) {
    const arg = argv[i];
    switch (arg) {
      case '--width': options.width = number(value(i, arg), arg, 1); ++i; break;
      case '--height': options.height = number(value(i, arg), arg, 1); ++i; break;
      case '--camera': options.camera = number(value(i, arg), arg, 0); ++i; break;
      case '--press': options.press = value(i, arg); ++i; break;
      case '--hold-ms': options.holdMs = number(value(i, arg), arg, 0); ++i; break;
      case '--after': options.after = value(i, arg); ++i; break;
      case '--timeout-s': options.timeoutS = number(value(i, arg), arg, 0.001); ++i; break;
      default:
        if (arg.startsWith('--')) throw new UsageError(`unknown option ${arg}`);
        positional.push(arg);
    }
  }
  if (positional.length !== 2) throw new UsageError('needs PAGE.html and OUT.png');
  if (!options.width || !options.height) throw new UsageError('needs --width and --height');
  if (!Number.isInteger(options.width) || !Number.isInteger(options.height)) throw new UsageError('--width and --height must be integers');
  if (options.camera !== null && !Number.isInteger(options.camera)) throw new UsageError('--camera must be an integer');
  const pressing = [options.press, options.holdMs, options.after].filter((x) => x !== null).length;
  if (pressing !== 0 && pressing !== 3) throw new UsageError('--press, --hold-ms and --after go together');
  [options.page, options.out] = positional;
  return options;
}

// Polls fn() (a page.evaluate) until it returns a truthy value; throws on a page failure or when
// timeoutMs pass.
async function waitUntil(session, fn, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    session.throwIfFailed();
    const result = await fn();
    session.throwIfFailed();
    if (result) return result;
    if (Date.now() > deadline) throw new Error(`timed out after ${(timeoutMs / 1000).toFixed(1)} s waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

// Waits until the page has drawn `count` more frames (window.ibrr.frames).
async function waitFrames(session, count) {
  const start = await session.page.evaluate(() => window.ibrr.frames);
  await waitUntil(session, () => session.page.evaluate((n) => window.ibrr.frames >= n, start + count),
    FRAME_WAIT_MS, `${count} frames`);
}

// The canvas's drawing buffer as PNG bytes.
async function saveCanvas(session, file) {
  const dataUrl = await session.page.evaluate(() => document.getElementById('ibrr-canvas').toDataURL('image/png'));
  const prefix = 'data:image/png;base64,';
  if (!dataUrl.startsWith(prefix)) throw new Error('the canvas did not give a PNG');
  try {
    await writeFile(file, Buffer.from(dataUrl.slice(prefix.length), 'base64'));
  } catch (error) {
    throw new Error(`cannot write ${file} (${error.code || error.message})`);
  }
}

// Opens the page; records page errors and console errors (forwarded to stderr at once).
async function openPage(browser, options) {
  const context = await browser.newContext({ viewport: { width: options.width, height: options.height }, deviceScaleFactor: 1 });
  const page = await context.newPage();
  const failures = [];
  const session = {
    page,
    throwIfFailed() { if (failures.length) throw new Error(failures[0]); },
  };
  page.on('pageerror', (error) => {
    process.stderr.write(`page error: ${error.message}\n`);
    failures.push(`page error: ${error.message}`);
  });
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    process.stderr.write(`console error: ${message.text()}\n`);
    failures.push(`console error: ${message.text()}`);
  });
  page.on('crash', () => failures.push('the page crashed'));
  const url = pathToFileURL(path.resolve(options.page)).href;
  await page.goto(url, { waitUntil: 'load', timeout: options.timeoutS * 1000 });
  return session;
}

async function shoot(options) {
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  try {
    const session = await openPage(browser, options);
    const { page } = session;
    // The timeout runs from navigation start, as loadSeconds does.
    const elapsedMs = await page.evaluate(() => performance.now());
    await waitUntil(session, () => page.evaluate(() => Boolean(window.ibrr && window.ibrr.ready)),
      Math.max(options.timeoutS * 1000 - elapsedMs, 0), 'window.ibrr.ready');

    if (options.camera !== null) {
      await page.evaluate((n) => window.ibrr.setCamera(n), options.camera);
      await waitFrames(session, 2);
    }
    const camera = await page.evaluate(() => window.ibrr.cameraName);
    await saveCanvas(session, options.out);

    if (options.press !== null) {
      await page.keyboard.down(options.press);
      await page.waitForTimeout(options.holdMs);
      await page.keyboard.up(options.press);
      await waitFrames(session, 2);
      await saveCanvas(session, options.after);
    }

    const hooks = await page.evaluate(() => ({
      loadSeconds: window.ibrr.loadSeconds, frameMs: window.ibrr.frameMs, renderer: window.ibrr.renderer,
    }));
    session.throwIfFailed();
    return { loadSeconds: hooks.loadSeconds, frameMs: hooks.frameMs, camera, renderer: hooks.renderer };
  } finally {
    await browser.close();
  }
}

async function main() {
  let options;
  try {
    options = parseArgs(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`page_shot.mjs: ${error.message}\nusage: node tests/web/page_shot.mjs PAGE.html OUT.png --width W --height H [--camera N] [--press KEY --hold-ms MS --after OUT2.png] [--timeout-s S]\n`);
    process.exit(2);
  }
  try {
    const result = await shoot(options);
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } catch (error) {
    const message = String(error && error.message ? error.message : error).split('\n')[0];
    process.stderr.write(`page_shot.mjs: ${options.page}: ${message}\n`);
    process.exit(1);
  }
}

main();

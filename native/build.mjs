#!/usr/bin/env node
// Builds the native addons with node-gyp (run by `npm run build:native` and `postinstall`).
// - triangulation: plain C++ (node-addon-api); must build.
// - opencv: links Debian's libopencv-dev (pkg-config opencv4); required where OpenCV is installed,
//   skipped with a warning where it is not (calibration and video decoding then report it missing).
// - capture: multi-camera capture (threads, sync, recording), same OpenCV condition as opencv; also
//   links FFmpeg's libavformat/libavcodec/libavutil (libavformat-dev, which libopencv-dev pulls in).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const gyp = process.env.npm_config_node_gyp ?? null;

function nodeGyp(cwd) {
  const args = ['rebuild'];
  if (!process.env.npm_config_nodedir && existsSync('/usr/include/node/node.h')) args.push('--nodedir=/usr');
  const cmd = gyp ? [process.execPath, [gyp, ...args]] : ['node-gyp', args];
  const r = spawnSync(cmd[0], cmd[1], { cwd, stdio: 'inherit', env: { ...process.env, JOBS: process.env.JOBS ?? '2' } });
  return r.status === 0;
}

function hasOpenCv() {
  try {
    execFileSync('pkg-config', ['--exists', 'opencv4']);
    return true;
  } catch {
    return false;
  }
}

const t0 = Date.now();
if (!nodeGyp(path.join(here, 'triangulation'))) {
  console.error('native: triangulation addon failed to build');
  process.exit(1);
}
if (hasOpenCv()) {
  for (const name of ['opencv', 'capture']) {
    if (!nodeGyp(path.join(here, name))) {
      console.error(
        `native: ${name} addon failed to build (libopencv-dev is installed${name === 'capture' ? '; the capture addon also needs libavformat-dev' : ''})`,
      );
      process.exit(1);
    }
  }
} else {
  console.warn(
    'native: pkg-config opencv4 not found; skipped the opencv and capture addons (install libopencv-dev for calibration, video input and live capture)',
  );
}
console.log(`native: addons built in ${((Date.now() - t0) / 1000).toFixed(1)} s`);

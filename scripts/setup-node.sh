#!/usr/bin/env bash
# Install the Node dependencies exactly as locked (npm ci), which also compiles the native addons
# in native/ (node-gyp, `postinstall`). The Electron binary and onnxruntime's GPU extras are not
# downloaded and OpenCV's own build is skipped (the addon links the system libopencv-dev): the app
# then runs through the web host (`npm start`). Works as root and as a user (no sudo needed).
# Called by the README's set-up and by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
export ELECTRON_SKIP_BINARY_DOWNLOAD="${ELECTRON_SKIP_BINARY_DOWNLOAD:-1}"
export ONNXRUNTIME_NODE_INSTALL="${ONNXRUNTIME_NODE_INSTALL:-skip}"
export OPENCV4NODEJS_DISABLE_AUTOBUILD="${OPENCV4NODEJS_DISABLE_AUTOBUILD:-1}"
echo "setup-node: node $(node --version), npm $(npm --version)"
exec npm ci --no-audit --no-fund "$@"

#!/usr/bin/env bash
# Install MathJax 3 from the npm registry into build/docs-node (ignored by git);
# the docs hook copies its es5 bundle into the built site.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ ! -f build/docs-node/node_modules/mathjax/es5/tex-mml-chtml.js ]; then
  npm install --prefix build/docs-node mathjax@3 --no-audit --no-fund --loglevel=error
fi

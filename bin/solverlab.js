#!/usr/bin/env node
// The installed `solverlab` command: the compiled CLI (npm run build makes dist/).
import '../dist/cli/bin.js';

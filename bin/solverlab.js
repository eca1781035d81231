#!/usr/bin/env node
// The installed `solverlab` command: the compiled CLI (npm run build makes dist/), started again with
// the heap this machine allows when node's default is smaller (src/cli/heap.ts).
process.env.SOLVERLAB_HEAP_REEXEC ??= '1';
await import('../dist/cli/bin.js');

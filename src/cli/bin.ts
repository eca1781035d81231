#!/usr/bin/env node
/**
 * Entry point of the `solverlab` command. The bundle (scripts/bundle.mjs defines SOLVERLAB_BUNDLED)
 * and the installed bin (bin/solverlab.js sets SOLVERLAB_HEAP_REEXEC) first make sure of the heap
 * the machine allows (cli/heap.ts); the clone's launcher passes it to node itself.
 */
import { reexecWithHeap } from './heap.js';

declare const SOLVERLAB_BUNDLED: boolean | undefined;
const bundled = typeof SOLVERLAB_BUNDLED !== 'undefined' && SOLVERLAB_BUNDLED;
const child = bundled || process.env.SOLVERLAB_HEAP_REEXEC === '1' ? await reexecWithHeap() : null;
if (child !== null) process.exit(child);
else {
  const { main } = await import('./main.js');
  main(process.argv.slice(2)).then(exitAfterFlush);
}

/**
 * Exit once standard output and standard error have reached the OS: on a pipe Node writes them
 * asynchronously, and process.exit at once cut `run --json - | …` at the pipe's 64 KiB buffer. A
 * write's callback runs after everything queued before it has been handed over.
 */
function exitAfterFlush(code: number): void {
  let pending = 2;
  const done = () => {
    if (--pending === 0) process.exit(code);
  };
  process.stdout.write('', done);
  process.stderr.write('', done);
}

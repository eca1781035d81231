#!/usr/bin/env node
/** Entry point of the `solverlab` command. */
import { main } from './main.js';

main(process.argv.slice(2)).then((code) => process.exit(code));

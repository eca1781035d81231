/** SolverLab's version; test/cli.test.ts holds it equal to package.json's. */
export const VERSION = '0.1.0';

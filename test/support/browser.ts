/** The headless browser the report and viewer tests open: Debian's chromium, installed by scripts/setup.sh. */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';

export const chromiumPath = '/usr/bin/chromium';

/** false (and the test skipped) when there is no browser outside CI; under CI a missing browser fails. */
export function haveBrowser(t: { skip(message?: string): void }): boolean {
  if (existsSync(chromiumPath)) return true;
  if (process.env.CI) assert.fail(`${chromiumPath} is missing (install Debian's chromium package: scripts/setup.sh does it as root)`);
  t.skip(`${chromiumPath} is missing: install Debian's chromium package (scripts/setup.sh does it as root)`);
  return false;
}

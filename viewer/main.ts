/**
 * The viewer's entry point (bundled by scripts/build-viewer.mjs into app.js).
 * zod must not compile validators with `new Function` under the page's Content-Security-Policy,
 * and it decides when a schema is built, so jitless is set before the schemas' module loads.
 */
import './zod-jitless.js';
import './style.css';
import { App } from './app.js';

const app = new App();
app.start().catch((e) => {
  console.error(e);
  const box = document.getElementById('notice');
  if (box) {
    box.textContent = `The viewer could not start: ${(e as Error).message}`;
    box.hidden = false;
  }
});

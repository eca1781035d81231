/** Imported first by main.ts: zod validates without generated code (no `new Function`, which the page's CSP forbids). */
import { z } from 'zod';

z.config({ jitless: true });

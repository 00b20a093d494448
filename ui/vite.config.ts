// Vite build of the web app. Output goes to ui/dist, which the api serves (http/ui.ts). No React plugin: oxc
// compiles JSX with the automatic runtime.
import { defineConfig } from 'vite';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root,
  base: '/',
  publicDir: false,
  oxc: { jsx: { runtime: 'automatic' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    reportCompressedSize: true,
    chunkSizeWarningLimit: 800,
  },
  server: {
    // `npx vite --config ui/vite.config.ts` for development against an api on :8000.
    proxy: { '/api': 'http://127.0.0.1:8000' },
  },
});

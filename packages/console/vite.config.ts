// The console's build (docs/guides/console.md): Preact compiled by Vite's own JSX transform into dist/, which
// the gateway serves at /ui. Everything is bundled; the page loads nothing from another origin.
import { defineConfig } from 'vite';

export default defineConfig({
  base: '/ui/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    reportCompressedSize: false,
    // One small bundle; no inline assets as data: URLs beyond a tiny size.
    assetsInlineLimit: 0,
  },
  logLevel: 'warn',
});

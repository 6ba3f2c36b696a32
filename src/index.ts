/**
 * The package root, `tfjs-accumulate`: the core (src/core/index.ts), unchanged.
 *
 * It stays a file of its own, rather than pointing package.json at the core's folder, so that
 * the root's built paths (`dist/index.js`, `dist/index.d.ts`, `dist/esm/index.js`) are the ones
 * every release has had: `main`, `types`, `module`, `exports` and resolvers that read only
 * `main` (tslab's Node10 resolution) all keep working with no change a user could see.
 */
export * from './core';

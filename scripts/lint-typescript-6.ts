// typescript-eslint needs TypeScript's JavaScript API, which TypeScript 7 (our compiler, a native port) no longer
// ships: the linter's own packages get TypeScript 6 (installed as `typescript-for-lint`), everything else keeps 7.
// Preloaded by `npm run lint` (node --import); the hooks also apply to require(), which typescript-eslint uses.
import { registerHooks } from 'node:module';

const LINTER_PACKAGES = /node_modules\/(@typescript-eslint\/[^/]+|typescript-eslint|ts-api-utils)\//;

registerHooks({
  resolve(specifier, context, next) {
    if ((specifier === 'typescript' || specifier.startsWith('typescript/')) && LINTER_PACKAGES.test(context.parentURL ?? ''))
      return next(specifier.replace(/^typescript/, 'typescript-for-lint'), context);
    return next(specifier, context);
  },
});

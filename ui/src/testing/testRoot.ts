// The React root of a component test: a host element appended to the body, rendered into inside act(). After every
// test, whatever its outcome, the root is unmounted, the body emptied, the globals stubbed (the stand-in api's
// `fetch`) restored and real timers put back.
import { afterEach, vi } from 'vitest';
import { act, type ReactNode } from 'react';
import { createRoot, type Root } from 'react-dom/client';

(globalThis as any).IS_REACT_ACT_ENVIRONMENT = true;

export interface TestRoot {
  /** Renders `node` into a new root on a new host appended to the body, and returns the host. */
  mount(node: ReactNode): Promise<HTMLElement>;
  /** Renders `node` in the current root, in place of what it showed. */
  render(node: ReactNode): Promise<void>;
  /** Unmounts the current root now (its host stays in the body until the test ends). */
  unmount(): void;
}

/** The test file's root; call once at the top of the file (it registers the teardown). */
export function testRoot(): TestRoot {
  let root: Root | null = null;
  afterEach(() => {
    act(() => root?.unmount());
    root = null;
    document.body.innerHTML = '';
    vi.unstubAllGlobals();
    vi.useRealTimers();
  });
  return {
    async mount(node) {
      const host = document.createElement('div');
      document.body.appendChild(host);
      root = createRoot(host);
      await act(async () => root!.render(node));
      return host;
    },
    render: (node) => act(async () => root!.render(node)),
    unmount() {
      act(() => root!.unmount());
      root = null;
    },
  };
}

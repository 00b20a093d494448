// The shared wire package between the api and agents (invariant I5, docs/invariants.md).
export * from './version.ts';
export * from './frames.ts';
export * from './codec.ts';
export * from "./resultView.ts";

// The shared wire package between the api and agents (spec invariant I5).
export * from './version.ts';
export * from './frames.ts';
export * from './codec.ts';

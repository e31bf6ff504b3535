#!/usr/bin/env node
// The `drm` entry point. TypeScript sources run through tsx's loader, so `npm install` is the
// whole set-up; this file and commands/main.ts are the only places that end the process.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../commands/main.ts');
process.exitCode = await main(process.argv);

// Written by `npm run db:generate`: the generated migrations, oldest first.
import type { GeneratedStep } from '../types.js';

export const generatedSteps: GeneratedStep[] = [];

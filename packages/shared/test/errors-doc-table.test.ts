// The errors reference (docs/reference/errors.md) and the error registry say the same thing (STYLE: Errors).
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { ERROR_CODES } from '../src/index.js';

t.test(
  "the errors reference's table lists every code with its status, retryability, fault and message",
  async (t) => {
    const doc = fs.readFileSync(
      path.resolve(import.meta.dirname, '../../../docs/reference/errors.md'),
      'utf8',
    );
    const rows = [
      ...doc.matchAll(
        /^\|\s*`([a-z_]+)`\s*\|\s*(\d{3})\s*\|\s*(yes|no)\s*\|\s*(user|model|system)\s*\|\s*(.+?)\s*\|$/gm,
      ),
    ].map((m) => ({
      code: m[1]!,
      status: Number(m[2]),
      retryable: m[3] === 'yes',
      fault: m[4],
      message: m[5],
    }));
    const registry = Object.entries(ERROR_CODES).map(([code, s]) => ({
      code,
      status: s.status,
      retryable: s.retryable,
      fault: s.fault,
      message: s.message,
    }));
    t.same(rows, registry);
  },
);

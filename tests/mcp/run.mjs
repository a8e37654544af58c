// Launcher for the node tests: runs one test file if the pinned npm packages
// are installed (`npm ci` in this directory); outside CI a missing
// node_modules is a clean skip (exit 77), in CI it is a failure.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [file, ...dirs] = process.argv.slice(2);
const modulesDir = dirs.find((d) => !existsSync(path.join(d, 'node_modules', '.package-lock.json')));
if (modulesDir) {
  const how = `run: npm ci --prefix ${modulesDir}`;
  if (process.env.CI) {
    console.error(`node_modules missing in ${modulesDir} under CI (${how})`);
    process.exit(1);
  }
  console.log(`SKIP: npm packages not installed in ${modulesDir} (${how})`);
  process.exit(77);
}
await import(pathToFileURL(path.resolve(file)).href);

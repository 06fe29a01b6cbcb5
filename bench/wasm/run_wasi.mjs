// run_wasi.mjs: runs a WASI preview1 command module in node (the "node" column of
// bench/wasm.sh). Usage: node --no-concurrent-marking run_wasi.mjs PROG.wasm [ARGS...]
// Exit code = the module's proc_exit code (0 when _start returns).
import { readFile } from 'node:fs/promises';
import { WASI } from 'node:wasi';
import { argv, exit, stderr } from 'node:process';

if (argv.length < 3 || argv[2] === '--help') {
  stderr.write('usage: node run_wasi.mjs PROG.wasm [ARGS...]\n');
  exit(argv[2] === '--help' ? 0 : 2);
}
const wasi = new WASI({ version: 'preview1', args: argv.slice(2), env: {}, returnOnExit: true });
let module;
try {
  module = await WebAssembly.compile(await readFile(argv[2]));
} catch (e) {
  stderr.write(`run_wasi: cannot load ${argv[2]}: ${e.message}\n`);
  exit(2);
}
const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
exit(wasi.start(instance));

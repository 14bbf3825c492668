// Mocha's settings. With no test file named on the command line every test
// runs (`make test`); `npx mocha test/http/targets.test.ts` runs that file
// alone (a `spec` here would be added to the files named, not replaced).
'use strict';
const namesFiles = process.argv.slice(2).some((arg) => !arg.startsWith('-') && /(^|\/)test\/|\.test\.ts$/.test(arg));
module.exports = {
  'node-option': ['import=tsx'],
  ...(namesFiles ? {} : { spec: ['test/**/*.test.ts'] }),
  timeout: 20000,
  recursive: true,
  reporter: './test/support/summary-reporter.cjs',
};

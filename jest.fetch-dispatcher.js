// The test processes' `fetch` keeps an idle connection for at most 1 s. Node's default keeps one
// until 2 s before the server's keep-alive timeout (10 s for our services), so a request sent on a
// connection idle for 8 s could meet the server closing it on a machine where a stalled process
// lets the server's timer run first: the test's fetch then failed with `read ECONNRESET` (seen in
// loaded CI runs, never in the product's own answers). 1 s leaves the server 9 s of slack.
const { Agent } = require('undici');

const fetchOfNode = globalThis.fetch;
let dispatcher;
globalThis.fetch = (input, init) => {
  dispatcher ??= new Agent({ keepAliveTimeout: 1000, keepAliveMaxTimeout: 1000 });
  return fetchOfNode(input, { dispatcher, ...init });
};

// Two test files at a time: the gateway's suites are end-to-end flows that spend most of their
// time waiting on PostgreSQL, Kafka, timers and child processes, so the second core would idle
// with one (CI's gateway run: 1872 s with one worker, 810 s with two, on a shared machine).
// Every file starts its own services on schemas, topics and ports of its own.
module.exports = { ...require('../../jest.preset.js'), maxWorkers: 2 };

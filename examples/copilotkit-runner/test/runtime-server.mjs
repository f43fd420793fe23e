// A CopilotKit runtime (@copilotkit/runtime 1.75.0, v2, its Node listener) on a random loopback port, as a team
// that keeps its Node tier would run it; started as its own process by runner.test.mjs, so that killing it is a
// real restart. RUNNER=parley (default): the ParleyAgentRunner onto PARLEY_URL/copilotkit. RUNNER=memory: the
// stock runtime (its in-memory runner) with an HttpAgent onto Parley's run route, the comparison.
// Prints "listening <port>" once it serves.
import { createServer } from 'node:http';
import { CopilotRuntime, InMemoryAgentRunner } from '@copilotkit/runtime/v2';
import { createCopilotNodeListener } from '@copilotkit/runtime/v2/node';
import { HttpAgent } from '@ag-ui/client';
import { ParleyAgentRunner } from '../index.js';

const parley = process.env.PARLEY_URL + '/copilotkit';
let options;
if ((process.env.RUNNER ?? 'parley') === 'parley') {
  const runner = new ParleyAgentRunner({ url: parley });
  options = { runtime: new CopilotRuntime({ agents: { default: runner.agent() }, runner }), hooks: runner.hooks };
} else {
  options = { runtime: new CopilotRuntime({ agents: { default: new HttpAgent({ url: parley + '/agent/default/run' }) },
    runner: new InMemoryAgentRunner() }) };
}
const server = createServer(createCopilotNodeListener({ ...options, basePath: '/api/copilotkit', cors: true }));
server.listen(0, '127.0.0.1', () => {
  console.log('listening ' + server.address().port);
});

// Preloaded with `node --require ./loopback.cjs`: every server in the process listens on 127.0.0.1 only.
// The MCP test servers listen on all interfaces and have no option for the host.
'use strict';
const net = require('net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const first = args[0];
  if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
    const callback = args.find((a) => typeof a === 'function');
    return listen.call(this, { port: Number(first), host: '127.0.0.1' }, callback);
  }
  if (first && typeof first === 'object' && first.port !== undefined) {
    return listen.call(this, { ...first, host: '127.0.0.1' }, ...args.slice(1));
  }
  return listen.apply(this, args);
};

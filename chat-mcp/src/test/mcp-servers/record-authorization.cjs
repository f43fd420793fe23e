// Preloaded with `node --require ./record-authorization.cjs`: every HTTP request's Authorization header
// (or "-" without one) is appended as a line to the file named by PARLEY_RECORD_AUTHORIZATION.
'use strict';
const fs = require('fs');
const http = require('http');
const emit = http.Server.prototype.emit;
http.Server.prototype.emit = function (event, request, ...rest) {
  if (event === 'request' && process.env.PARLEY_RECORD_AUTHORIZATION) {
    fs.appendFileSync(process.env.PARLEY_RECORD_AUTHORIZATION, (request.headers.authorization || '-') + '\n');
  }
  return emit.call(this, event, request, ...rest);
};
